import { ConfigMap, newClient } from '@kubeloop/client';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finalizer } from '../src/index.js';

let server: ApiServer;
let client: ReturnType<typeof newClient>;
beforeAll(async () => {
  server = await startApiServer();
  client = newClient({
    host: server.url,
    tlsClientConfig: { caData: server.caPem },
    bearerToken: server.token,
    qps: -1,
    burst: 0,
    timeoutMs: 0,
    userAgent: 'finalizer-test',
  });
});
afterAll(async () => {
  await client?.close();
  await server?.stop();
});

const F = 'example.com/cleanup';
const key = (name: string) => ({ namespace: 'default', name });

describe('finalizer() (kube-rs runtime::finalizer, controller-runtime finalizer pattern)', () => {
  it('adds the finalizer and runs apply in the same call (no reconcile needed for the add, whatever the predicate); on deletion runs cleanup, removes it, the object goes', async () => {
    const cm = Object.freeze(await client.create(ConfigMap, { metadata: { ...key('f1') } }));
    const seen: string[] = [];
    const handlers = {
      apply: async (o: typeof cm) => {
        seen.push(`apply:${o.metadata?.finalizers?.join(',')}`);
        return { requeueAfterMs: 5000 };
      },
      cleanup: async () => {
        seen.push('cleanup');
      },
    };
    expect(await finalizer(client, ConfigMap, F, cm, handlers)).toEqual({ requeueAfterMs: 5000 });
    const withF = await client.get(ConfigMap, key('f1'));
    expect(withF.metadata?.finalizers).toEqual([F]);
    // A second reconcile: apply only, no write.
    const rv = withF.metadata?.resourceVersion;
    await finalizer(client, ConfigMap, F, withF, handlers);
    expect((await client.get(ConfigMap, key('f1'))).metadata?.resourceVersion).toBe(rv);
    await client.delete(ConfigMap, key('f1'));
    const deleting = await client.get(ConfigMap, key('f1'));
    expect(deleting.metadata?.deletionTimestamp).toBeTruthy();
    expect(await finalizer(client, ConfigMap, F, deleting, handlers)).toBeUndefined();
    expect(seen).toEqual([`apply:${F}`, `apply:${F}`, 'cleanup']);
    await expect(client.get(ConfigMap, key('f1'))).rejects.toMatchObject({ httpStatus: 404 });
  });

  it('a cleanup that throws keeps the finalizer (the object stays until cleanup succeeds); an object being deleted without it is left alone', async () => {
    await client.create(ConfigMap, { metadata: { ...key('f2'), finalizers: [F, 'other/keep'] } });
    await client.delete(ConfigMap, key('f2'));
    const deleting = await client.get(ConfigMap, key('f2'));
    const failing = {
      apply: async () => undefined,
      cleanup: async () => {
        throw new Error('external resource still busy');
      },
    };
    await expect(finalizer(client, ConfigMap, F, deleting, failing)).rejects.toThrow('still busy');
    expect((await client.get(ConfigMap, key('f2'))).metadata?.finalizers).toEqual([F, 'other/keep']);
    let ran = false;
    await finalizer(client, ConfigMap, 'not/ours', deleting, {
      apply: async () => undefined,
      cleanup: async () => {
        ran = true;
      },
    });
    expect(ran).toBe(false);
    await finalizer(client, ConfigMap, F, deleting, { ...failing, cleanup: async () => undefined });
    expect((await client.get(ConfigMap, key('f2'))).metadata?.finalizers).toEqual(['other/keep']);
  });
});
