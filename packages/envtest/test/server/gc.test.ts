import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTestServer, type TestServer, waitFor } from './helpers.js';

const CMS = '/api/v1/namespaces/default/configmaps';
const cm = (name: string, owners: Json[] = []) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(owners.length ? { ownerReferences: owners } : {}) },
});
const ref = (o: Json) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  name: o.metadata.name,
  uid: o.metadata.uid,
});

describe('opt-in garbage collector for ownerReferences', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ garbageCollection: true });
  });
  afterAll(async () => {
    await t.close();
  });

  it('Background: deletes dependents whose owners are all gone, drops the dangling reference of the others', async () => {
    const parent = (await t.req('POST', CMS, cm('parent'))).body;
    const other = (await t.req('POST', CMS, cm('other'))).body;
    expect((await t.req('POST', CMS, cm('only-child', [ref(parent)]))).status).toBe(201);
    expect((await t.req('POST', CMS, cm('shared-child', [ref(parent), ref(other)]))).status).toBe(201);
    expect(
      (await t.req('POST', CMS, cm('grandchild', [ref((await t.req('GET', `${CMS}/only-child`)).body)])))
        .status,
    ).toBe(201);
    expect((await t.req('DELETE', `${CMS}/parent`)).status).toBe(200);
    await waitFor(async () => (await t.req('GET', `${CMS}/grandchild`)).status === 404, 5000, 'cascade');
    expect((await t.req('GET', `${CMS}/only-child`)).status).toBe(404);
    const shared = await t.req('GET', `${CMS}/shared-child`);
    expect(shared.status).toBe(200);
    expect(shared.body.metadata.ownerReferences.map((r: Json) => r.name)).toEqual(['other']);
  });

  it('Orphan: dependents stay, without the reference', async () => {
    const parent = (await t.req('POST', CMS, cm('parent2'))).body;
    expect((await t.req('POST', CMS, cm('orphan', [ref(parent)]))).status).toBe(201);
    expect((await t.req('DELETE', `${CMS}/parent2?propagationPolicy=Orphan`)).status).toBe(200);
    await waitFor(
      async () => (await t.req('GET', `${CMS}/orphan`)).body.metadata.ownerReferences === undefined,
      5000,
      'orphaned',
    );
    expect((await t.req('GET', `${CMS}/orphan`)).status).toBe(200);
  });

  it('Foreground: the owner waits with the foregroundDeletion finalizer until its blocking dependents are gone', async () => {
    const owner = (await t.req('POST', CMS, cm('fg-owner'))).body;
    const blocking = { ...ref(owner), blockOwnerDeletion: true };
    const held = cm('fg-held', [blocking]);
    (held.metadata as Json).finalizers = ['example.com/hold'];
    expect((await t.req('POST', CMS, held)).status).toBe(201);
    expect((await t.req('POST', CMS, cm('fg-loose', [ref(owner)]))).status).toBe(201);

    const del = await t.req('DELETE', `${CMS}/fg-owner`, { propagationPolicy: 'Foreground' });
    expect(del.status).toBe(200);
    expect(del.body.metadata.deletionTimestamp).toEqual(expect.any(String));
    expect(del.body.metadata.finalizers).toEqual(['foregroundDeletion']);
    // every dependent is deleted; the one without blockOwnerDeletion goes, the held one stays terminating
    await waitFor(
      async () => (await t.req('GET', `${CMS}/fg-loose`)).status === 404,
      5000,
      'loose dependent',
    );
    await waitFor(
      async () => (await t.req('GET', `${CMS}/fg-held`)).body.metadata?.deletionTimestamp !== undefined,
      5000,
      'held dependent terminating',
    );
    const waiting = await t.req('GET', `${CMS}/fg-owner`);
    expect(waiting.status).toBe(200);
    expect(waiting.body.metadata.finalizers).toEqual(['foregroundDeletion']);

    // releasing the blocking dependent releases the owner
    const h = (await t.req('GET', `${CMS}/fg-held`)).body;
    const released = await t.req('PUT', `${CMS}/fg-held`, {
      ...h,
      metadata: { ...h.metadata, finalizers: [] },
    });
    expect(released.status).toBe(200);
    await waitFor(async () => (await t.req('GET', `${CMS}/fg-owner`)).status === 404, 5000, 'owner released');
  });

  it('Foreground: a chain of blocking dependents unwinds from the leaves, the owner last', async () => {
    const top = (await t.req('POST', CMS, cm('chain-top'))).body;
    const mid = (await t.req('POST', CMS, cm('chain-mid', [{ ...ref(top), blockOwnerDeletion: true }]))).body;
    expect(
      (await t.req('POST', CMS, cm('chain-leaf', [{ ...ref(mid), blockOwnerDeletion: true }]))).status,
    ).toBe(201);
    const w = await t.watch(`${CMS}?watch=1&resourceVersion=${top.metadata.resourceVersion}`);
    expect((await t.req('DELETE', `${CMS}/chain-top?propagationPolicy=Foreground`)).status).toBe(200);
    const deleted = () =>
      w.events.filter((e: Json) => e.type === 'DELETED').map((e: Json) => e.object.metadata.name);
    await w.until(() => deleted().length === 3);
    const order = deleted();
    w.close();
    expect(order).toEqual(['chain-leaf', 'chain-mid', 'chain-top']);
  });

  it('is off by default, as in upstream envtest', async () => {
    const plain = await startTestServer();
    try {
      const parent = (await plain.req('POST', CMS, cm('p'))).body;
      await plain.req('POST', CMS, cm('c', [ref(parent)]));
      await plain.req('DELETE', `${CMS}/p`);
      // a later write is ordered after any collection the delete could have started
      await plain.req('POST', CMS, cm('marker'));
      expect((await plain.req('GET', `${CMS}/c`)).status).toBe(200);
    } finally {
      await plain.close();
    }
  });
});
