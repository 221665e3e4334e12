import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DynamicRESTMapper, NoKindMatchError, Transport } from '../src/index.js';

type Routes = Record<string, { status?: number; contentType?: string; body: unknown } | undefined>;

/** A discovery-only HTTP server on 127.0.0.1 that records every path asked for. */
async function discoveryServer(routes: Routes): Promise<{ server: Server; url: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]!;
    hits.push(path);
    const wantsAggregated = (req.headers.accept ?? '').includes('as=APIGroupDiscoveryList');
    const r = routes[wantsAggregated ? `${path}#aggregated` : path] ?? routes[path];
    if (!r) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'NotFound',
          code: 404,
        }),
      );
      return;
    }
    res.writeHead(r.status ?? 200, { 'content-type': r.contentType ?? 'application/json' });
    res.end(JSON.stringify(r.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

const legacy: Routes = {
  '/api': { body: { kind: 'APIVersions', versions: ['v1'] } },
  '/apis': {
    body: {
      kind: 'APIGroupList',
      groups: [
        {
          name: 'apps',
          versions: [
            { groupVersion: 'apps/v1', version: 'v1' },
            { groupVersion: 'apps/v1beta1', version: 'v1beta1' },
          ],
          preferredVersion: { groupVersion: 'apps/v1', version: 'v1' },
        },
        { name: 'gone.example.com', versions: [{ version: 'v1' }], preferredVersion: { version: 'v1' } },
      ],
    },
  },
  '/api/v1': {
    body: {
      kind: 'APIResourceList',
      groupVersion: 'v1',
      resources: [
        { name: 'pods', kind: 'Pod', namespaced: true },
        { name: 'pods/status', kind: 'Pod', namespaced: true },
        { name: 'namespaces', kind: 'Namespace', namespaced: false },
      ],
    },
  },
  '/apis/apps/v1': {
    body: {
      kind: 'APIResourceList',
      groupVersion: 'apps/v1',
      resources: [{ name: 'deployments', kind: 'Deployment', namespaced: true }],
    },
  },
};

const servers: Server[] = [];
const transports: Transport[] = [];
afterEach(async () => {
  for (const t of transports.splice(0)) await t.close();
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function mapperFor(routes: Routes) {
  const s = await discoveryServer(routes);
  servers.push(s.server);
  const transport = new Transport({
    host: s.url,
    tlsClientConfig: {},
    qps: -1,
    burst: 0,
    timeoutMs: 0,
    userAgent: 'rest-mapper-test',
  });
  transports.push(transport);
  return { mapper: new DynamicRESTMapper(transport), hits: s.hits };
}

describe('DynamicRESTMapper', () => {
  it('legacy discovery: loads only the missing group, then answers from memory', async () => {
    const { mapper, hits } = await mapperFor(legacy);
    const dep = await mapper.restMapping({ group: 'apps', version: 'v1', kind: 'Deployment' });
    expect(dep).toEqual({
      gvk: { group: 'apps', version: 'v1', kind: 'Deployment' },
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      scope: 'Namespaced',
    });
    expect(hits).toEqual(['/api', '/apis', '/apis/apps/v1']);
    await mapper.restMapping({ group: 'apps', version: 'v1', kind: 'Deployment' });
    expect(hits).toHaveLength(3);
    expect(await mapper.isNamespaced({ group: '', version: 'v1', kind: 'Namespace' })).toBe(false);
    expect(hits.at(-1)).toBe('/api/v1');
    expect(await mapper.kindFor({ group: '', resource: 'pods' })).toEqual({
      group: '',
      version: 'v1',
      kind: 'Pod',
    });
  });

  it('concurrent misses share one load', async () => {
    const { mapper, hits } = await mapperFor(legacy);
    await Promise.all(
      Array.from({ length: 10 }, () =>
        mapper.restMapping({ group: 'apps', version: 'v1', kind: 'Deployment' }),
      ),
    );
    expect(hits.filter((h) => h === '/apis/apps/v1')).toHaveLength(1);
    expect(hits.filter((h) => h === '/api')).toHaveLength(1);
  });

  it('an unknown kind refreshes once, then fails with NoKindMatchError; a 404 group-version is forgotten', async () => {
    const { mapper, hits } = await mapperFor(legacy);
    await expect(mapper.restMapping({ group: 'apps', version: 'v1', kind: 'Nope' })).rejects.toBeInstanceOf(
      NoKindMatchError,
    );
    expect(hits.filter((h) => h === '/apis')).toHaveLength(2);
    await expect(
      mapper.restMapping({ group: 'gone.example.com', version: 'v1', kind: 'Thing' }),
    ).rejects.toThrow(/no matches for kind "Thing" in version "gone.example.com\/v1"/);
  });

  it('aggregated discovery: every group from /api and /apis, no per-group requests', async () => {
    const ct = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
    const { mapper, hits } = await mapperFor({
      ...legacy,
      '/api#aggregated': {
        contentType: ct,
        body: {
          kind: 'APIGroupDiscoveryList',
          items: [
            {
              metadata: {},
              versions: [
                {
                  version: 'v1',
                  resources: [
                    { resource: 'pods', responseKind: { kind: 'Pod' }, scope: 'Namespaced' },
                    { resource: 'namespaces', responseKind: { kind: 'Namespace' }, scope: 'Cluster' },
                  ],
                },
              ],
            },
          ],
        },
      },
      '/apis#aggregated': {
        contentType: ct,
        body: {
          kind: 'APIGroupDiscoveryList',
          items: [
            {
              metadata: { name: 'apps' },
              versions: [
                {
                  version: 'v1',
                  resources: [
                    { resource: 'deployments', responseKind: { kind: 'Deployment' }, scope: 'Namespaced' },
                  ],
                },
              ],
            },
          ],
        },
      },
    });
    expect(
      (await mapper.restMapping({ group: 'apps', version: 'v1', kind: 'Deployment' })).resource.resource,
    ).toBe('deployments');
    expect((await mapper.restMapping({ group: '', version: 'v1', kind: 'Namespace' })).scope).toBe('Cluster');
    expect(hits).toEqual(['/api', '/apis']);
  });
});
