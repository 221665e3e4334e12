// A chaos run's starting objects are created with a bounded number in flight and survive a server that sheds
// load: creating 10,000 ConfigMaps on a loaded real kube-apiserver in batches of 16 (each batch waiting for its
// slowest create) took 17 minutes, and one 500 or timeout ended the whole run before its faults began.

import { type ApiClient, ConfigMap, isAlreadyExists, Namespace, newClient } from '@kubeloop/client';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../src/chaos/random.js';
import { configMapTraffic } from '../src/index.js';

let server: ApiServer;
let client: ApiClient;
let n = 0;

beforeAll(async () => {
  server = await startApiServer();
  client = newClient({
    host: server.url,
    tlsClientConfig: { caData: server.caPem },
    bearerToken: server.token,
    qps: -1,
    burst: 0,
    timeoutMs: 30_000,
    userAgent: 'populate-test',
  });
});
afterAll(async () => {
  await client?.close();
  await server?.stop();
});

async function freshNamespace(): Promise<string> {
  const namespace = `populate-${++n}`;
  await client.create(Namespace, { metadata: { name: namespace } });
  return namespace;
}

/** The client, counting the creates in flight at once. */
function counting(inner: ApiClient): { client: ApiClient; maxInFlight: () => number } {
  let inFlight = 0;
  let max = 0;
  const wrapped = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop !== 'create') return Reflect.get(target, prop, receiver);
      return async (...args: Parameters<ApiClient['create']>) => {
        max = Math.max(max, ++inFlight);
        try {
          return await target.create(...args);
        } finally {
          inFlight--;
        }
      };
    },
  });
  return { client: wrapped, maxInFlight: () => max };
}

const names = async (namespace: string) =>
  (await client.list(ConfigMap, { namespace })).items.map((c) => c.metadata?.name).sort();

describe('configMapTraffic populate', () => {
  it('keeps 48 creates in flight, not more, and creates every object once', async () => {
    const namespace = await freshNamespace();
    const c = counting(client);
    await configMapTraffic('pop-').populate({ client: c.client, namespace, random: seededRandom(1) }, 200);
    expect(c.maxInFlight()).toBe(48);
    const want = Array.from({ length: 200 }, (_, i) => `pop-${i}`).sort();
    expect(await names(namespace)).toEqual(want);
  });

  it('tries a create again after a 500 or a 429 without Retry-After', async () => {
    const namespace = await freshNamespace();
    const fail500 = server.faults.failRequests({
      match: { verb: 'create', resource: 'configmaps', namespace },
      status: 500,
      times: 5,
    });
    const fail429 = server.faults.failRequests({
      match: { verb: 'create', resource: 'configmaps', namespace },
      status: 429,
      times: 3,
    });
    await configMapTraffic('retry-').populate({ client, namespace, random: seededRandom(1) }, 20);
    expect(fail500.hits).toBe(5);
    expect(fail429.hits).toBe(3);
    expect(await names(namespace)).toHaveLength(20);
  });

  it('fails on a client error other than 429, and on an object that exists before any retry', async () => {
    const namespace = await freshNamespace();
    server.faults.failRequests({
      match: { verb: 'create', resource: 'configmaps', namespace },
      status: 422,
      times: 1,
    });
    await expect(
      configMapTraffic('bad-').populate({ client, namespace, random: seededRandom(1) }, 3),
    ).rejects.toMatchObject({ httpStatus: 422 });

    const other = await freshNamespace();
    await client.create(ConfigMap, { metadata: { namespace: other, name: 'dup-1' } });
    const err = await configMapTraffic('dup-')
      .populate({ client, namespace: other, random: seededRandom(1) }, 3)
      .catch((e: unknown) => e);
    expect(isAlreadyExists(err)).toBe(true);
  });
});
