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
