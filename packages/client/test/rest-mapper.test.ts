import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeClock } from '@kubeloop/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { DynamicRESTMapper, type DynamicRESTMapperOptions } from '../src/entries/apiutil.js';
import { isResourceNotFound, NoKindMatchError } from '../src/entries/errors.js';
import { statusErrorFromResponse } from '../src/errors.js';
import { StatusError } from '../src/index.js';
import { Transport } from '../src/transport/index.js';

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

async function mapperFor(routes: Routes, options: DynamicRESTMapperOptions = {}) {
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
  return { mapper: new DynamicRESTMapper(transport, options), hits: s.hits };
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
    expect([...hits.slice(0, 2)].sort()).toEqual(['/api', '/apis']);
    expect(hits.slice(2)).toEqual(['/apis/apps/v1']);
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
    expect([...hits].sort()).toEqual(['/api', '/apis']);
  });
});

/** Discovery for group example.com with the given versions, each serving the given kinds (legacy + aggregated). */
function exampleGroup(versions: Record<string, string[]>, preferred: string): Routes {
  const plural = (k: string) => `${k.toLowerCase()}s`;
  const routes: Routes = {
    '/api': { body: { kind: 'APIVersions', versions: ['v1'] } },
    '/api/v1': legacy['/api/v1'],
    '/apis': {
      body: {
        kind: 'APIGroupList',
        groups: Object.keys(versions).length
          ? [
              {
                name: 'example.com',
                versions: Object.keys(versions).map((v) => ({ version: v })),
                preferredVersion: { version: preferred },
              },
            ]
          : [],
      },
    },
  };
  for (const [v, kinds] of Object.entries(versions))
    routes[`/apis/example.com/${v}`] = {
      body: { resources: kinds.map((k) => ({ name: plural(k), kind: k, namespaced: true })) },
    };
  return routes;
}

describe('DynamicRESTMapper follows the cluster (C31, C32)', () => {
  const Widget = { group: 'example.com', version: 'v1', kind: 'Widget' };
  const Gadget = { group: 'example.com', version: 'v2', kind: 'Gadget' };

  it('a kind installed later resolves on its first lookup; a version no longer served is forgotten after invalidate', async () => {
    const routes = exampleGroup({ v1: ['Widget'] }, 'v1');
    const clock = new FakeClock();
    const { mapper, hits } = await mapperFor(routes, { clock });
    expect((await mapper.restMapping(Widget)).resource.resource).toBe('widgets');
    // install Gadget in v2 (v2 becomes preferred), Widget served in both
    Object.assign(routes, exampleGroup({ v2: ['Widget', 'Gadget'], v1: ['Widget'] }, 'v2'));
    const before = hits.length;
    expect((await mapper.restMapping(Gadget)).resource.resource).toBe('gadgets');
    expect(hits.slice(before)).toEqual(['/apis', '/apis/example.com/v2']);
    // versionless lookup → the preferred version
    expect((await mapper.restMapping({ ...Widget, version: '' })).gvk.version).toBe('v2');
    expect((await mapper.restMapping(Widget)).gvk.version).toBe('v1');
    // stop serving v1: the cached mapping stays until the client reports a 404 for the resource
    for (const k of Object.keys(routes)) delete routes[k];
    Object.assign(routes, exampleGroup({ v2: ['Widget', 'Gadget'] }, 'v2'));
    expect((await mapper.restMapping(Widget)).gvk.version).toBe('v1');
    mapper.invalidate({ group: 'example.com', version: 'v1' });
    const err = await mapper.restMapping(Widget).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoKindMatchError);
    expect((err as NoKindMatchError).servedVersions).toEqual(['v2']);
    expect((err as NoKindMatchError).message).toMatch(
      /kind "Widget" in version "example.com\/v1".*example.com\/v2/,
    );
    // v2 kinds keep working
    expect((await mapper.restMapping(Gadget)).gvk.version).toBe('v2');
  });

  it('repeated misses for a kind that does not exist refresh at most once per interval', async () => {
    const clock = new FakeClock();
    const { mapper, hits } = await mapperFor(exampleGroup({ v1: ['Widget'] }, 'v1'), {
      clock,
      missRefreshIntervalMs: 5000,
    });
    const Nope = { group: 'nothing.example.org', version: 'v1', kind: 'Nope' };
    for (let i = 0; i < 100; i++) {
      clock.step(10);
      const e = await mapper.restMapping(Nope).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(NoKindMatchError);
      expect((e as NoKindMatchError).groupVersions).toEqual([]);
    }
    // initial /api + /apis, then one refresh of /apis
    expect(hits).toHaveLength(3);
    clock.step(5000);
    await expect(mapper.restMapping(Nope)).rejects.toThrow(/group "nothing.example.org" is not served/);
    expect(hits).toHaveLength(4);
  });

  it('a deleted group is forgotten; re-created, it is found again once the interval passed', async () => {
    const routes = exampleGroup({ v1: ['Widget'] }, 'v1');
    const clock = new FakeClock();
    const { mapper } = await mapperFor(routes, { clock, missRefreshIntervalMs: 1000 });
    await mapper.restMapping(Widget);
    for (const k of Object.keys(routes)) delete routes[k];
    Object.assign(routes, exampleGroup({}, 'v1'));
    mapper.invalidate(Widget);
    await expect(mapper.restMapping(Widget)).rejects.toBeInstanceOf(NoKindMatchError);
    Object.assign(routes, exampleGroup({ v1: ['Widget'] }, 'v1'));
    await expect(mapper.restMapping(Widget)).rejects.toBeInstanceOf(NoKindMatchError); // held back
    clock.step(1000);
    expect((await mapper.restMapping(Widget)).resource.resource).toBe('widgets');
  });

  it('a rate-limited invalidate (a doubted scope) forgets a group version at most once per interval; a plain one always', async () => {
    const clock = new FakeClock();
    const { mapper, hits } = await mapperFor(exampleGroup({ v1: ['Widget'] }, 'v1'), {
      clock,
      missRefreshIntervalMs: 5000,
    });
    await mapper.restMapping(Widget);
    const gvFetches = () => hits.filter((h) => h === '/apis/example.com/v1').length;
    const before = gvFetches();
    expect(mapper.invalidate(Widget, { rateLimited: true })).toBe(true);
    await mapper.restMapping(Widget);
    expect(gvFetches()).toBe(before + 1);
    for (let i = 0; i < 10; i++) {
      clock.step(100);
      expect(mapper.invalidate(Widget, { rateLimited: true })).toBe(false);
      await mapper.restMapping(Widget);
    }
    expect(gvFetches()).toBe(before + 1);
    expect(mapper.invalidate(Widget)).toBe(true); // a 404 for the resource is never held back
    await mapper.restMapping(Widget);
    expect(gvFetches()).toBe(before + 2);
    clock.step(5000);
    expect(mapper.invalidate(Widget, { rateLimited: true })).toBe(true);
  });

  it('resource lists are a bounded LRU: an evicted group version is fetched again', async () => {
    const { mapper, hits } = await mapperFor(legacy, { maxGroupVersions: 1 });
    await mapper.restMapping({ group: 'apps', version: 'v1', kind: 'Deployment' });
    await mapper.restMapping({ group: '', version: 'v1', kind: 'Pod' });
    await mapper.restMapping({ group: 'apps', version: 'v1', kind: 'Deployment' });
    expect(hits.filter((h) => h === '/apis/apps/v1')).toHaveLength(2);
  });

  it('aggregatedDiscovery: false asks for plain JSON', async () => {
    const { mapper, hits } = await mapperFor(
      {
        ...legacy,
        '/apis#aggregated': { status: 500, body: { kind: 'Status', code: 500 } },
        '/api#aggregated': { status: 500, body: { kind: 'Status', code: 500 } },
      },
      { aggregatedDiscovery: false },
    );
    expect((await mapper.restMapping({ group: 'apps', version: 'v1', kind: 'Deployment' })).scope).toBe(
      'Namespaced',
    );
    expect(hits).toHaveLength(3);
  });

  it('isResourceNotFound tells a 404 for the resource from a 404 for an object', () => {
    expect(isResourceNotFound(statusErrorFromResponse(404, '404 page not found', 'GET /apis/x/v1/ys'))).toBe(
      true,
    );
    expect(
      isResourceNotFound(
        new StatusError({
          kind: 'Status',
          code: 404,
          reason: 'NotFound',
          message: 'the server could not find the requested resource',
          details: {},
        }),
      ),
    ).toBe(true);
    expect(
      isResourceNotFound(
        new StatusError({
          kind: 'Status',
          code: 404,
          reason: 'NotFound',
          details: { name: 'p', kind: 'pods' },
        }),
      ),
    ).toBe(false);
    expect(isResourceNotFound(new Error('x'))).toBe(false);
  });
});
