import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { gvkOf, isMetadataOnly, StaticRESTMapper } from '../src/entries/apiutil.js';
import { ApiClient, type Kind, metadataOnly, type PartialObjectMetadata, Pod, Secret } from '../src/index.js';
import { Transport } from '../src/transport/index.js';

describe('metadataOnly(kind)', () => {
  it('names the same GVK, is marked and frozen, and is idempotent', () => {
    const m = metadataOnly(Secret);
    expect(gvkOf(m)).toEqual(gvkOf(Secret));
    expect(isMetadataOnly(m)).toBe(true);
    expect(isMetadataOnly(Secret)).toBe(false);
    expect(Object.isFrozen(m)).toBe(true);
    expect(metadataOnly(m)).toBe(m);
    expectTypeOf(metadataOnly(Pod)).toEqualTypeOf<Kind<PartialObjectMetadata>>();
  });
});

const servers: Server[] = [];
const clients: ApiClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

describe('metadata-only reads from a server that ignores the as=PartialObjectMetadata Accept (C37)', () => {
  it('get, list and watch reduce whole objects (and frames without apiVersion/kind) to v1/Secret metadata', async () => {
    const accepts: string[] = [];
    const secret = { metadata: { name: 's', namespace: 'n', resourceVersion: '5' }, data: { k: 'c2VjcmV0' } };
    const server = createServer((req, res) => {
      accepts.push(String(req.headers.accept));
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url?.includes('watch=true')) {
        res.end(`${JSON.stringify({ type: 'ADDED', object: secret })}\n`);
      } else if (req.url?.endsWith('/secrets/s')) {
        res.end(JSON.stringify({ kind: 'Secret', apiVersion: 'v1', ...secret }));
      } else {
        res.end(JSON.stringify({ kind: 'SecretList', apiVersion: 'v1', metadata: {}, items: [secret] }));
      }
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const transport = new Transport({
      host: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      tlsClientConfig: {},
      qps: -1,
      burst: 0,
      timeoutMs: 0,
      userAgent: 'metadata-only-test',
    });
    const client = new ApiClient({
      transport,
      restMapper: new StaticRESTMapper([
        {
          gvk: { group: '', version: 'v1', kind: 'Secret' },
          resource: { group: '', version: 'v1', resource: 'secrets' },
          scope: 'Namespaced',
        },
      ]),
    });
    clients.push(client);
    const M = metadataOnly(Secret);
    const want = { apiVersion: 'v1', kind: 'Secret', metadata: secret.metadata };
    expect(await client.get(M, { namespace: 'n', name: 's' })).toEqual(want);
    expect((await client.list(M, { namespace: 'n' })).items).toEqual([want]);
    for await (const ev of client.watch(M, { namespace: 'n', resourceVersion: '1' })) {
      expect(ev).toEqual({ type: 'ADDED', object: want });
    }
    expect(accepts).toEqual([
      'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json',
      'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json',
      'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json',
    ]);
  });
});
