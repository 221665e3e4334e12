import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Json, pod, startTestServer, type TestServer } from './helpers.js';

const NS = '/api/v1/namespaces/default';
const names = (l: Json) => l.items.map((i: Json) => i.metadata.name);

describe('list: selectors, paging, resourceVersion rules', () => {
  let t: TestServer;
  // a fresh server per test: tests write objects (and compact) that others list
  beforeEach(async () => {
    t = await startTestServer();
    await t.req('POST', `${NS}/pods`, pod('a', { app: 'web', tier: 'x' }));
    await t.req('POST', `${NS}/pods`, pod('b', { app: 'web', tier: 'y', env: 'prod' }));
    await t.req('POST', `${NS}/pods`, pod('c', { app: 'db', old: 'true' }, { spec: { nodeName: 'n1' } }));
  });
  afterEach(async () => {
    await t.close();
  });

  it('applies the full label selector grammar', async () => {
    const q = async (sel: string) =>
      names((await t.req('GET', `${NS}/pods?labelSelector=${encodeURIComponent(sel)}`)).body);
    expect(await q('app=web')).toEqual(['a', 'b']);
    expect(await q('app==web,tier in (y, z)')).toEqual(['b']);
    expect(await q('tier notin (x)')).toEqual(['b', 'c']);
    expect(await q('env!=prod')).toEqual(['a', 'c']);
    expect(await q('!old')).toEqual(['a', 'b']);
    expect(await q('old')).toEqual(['c']);
    const bad = await t.req('GET', `${NS}/pods?labelSelector=${encodeURIComponent('app in (')}`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe("unable to parse requirement: found '', expected: ',', ')' or identifier");
  });

  it('supports per-resource field selectors and answers 400 for unsupported fields', async () => {
    const q = async (sel: string) => t.req('GET', `/api/v1/pods?fieldSelector=${encodeURIComponent(sel)}`);
    expect(names((await q('spec.nodeName=')).body)).toEqual(['a', 'b']);
    expect(names((await q('spec.nodeName=n1,status.phase=Pending')).body)).toEqual(['c']);
    expect(names((await q('metadata.name!=a,metadata.namespace=default')).body)).toEqual(['b', 'c']);
    const bad = await q('spec.foo=bar');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('field label not supported: spec.foo');
  });

  it('pages with limit/continue and remainingItemCount; continue after compaction is 410', async () => {
    const p1 = (await t.req('GET', `${NS}/pods?limit=1`)).body;
    expect(names(p1)).toEqual(['a']);
    expect(p1.metadata.remainingItemCount).toBe(2);
    // a write between pages does not change the snapshot of the paged list
    await t.req('POST', `${NS}/pods`, pod('aa'));
    const p2 = (await t.req('GET', `${NS}/pods?limit=1&continue=${encodeURIComponent(p1.metadata.continue)}`))
      .body;
    expect(names(p2)).toEqual(['b']);
    expect(p2.metadata.resourceVersion).toBe(p1.metadata.resourceVersion);
    const p3 = (await t.req('GET', `${NS}/pods?limit=1&continue=${encodeURIComponent(p2.metadata.continue)}`))
      .body;
    expect(names(p3)).toEqual(['c']);
    expect(p3.metadata.continue).toBeUndefined();
    const withSel = (await t.req('GET', `${NS}/pods?limit=1&labelSelector=app%3Dweb`)).body;
    expect(withSel.metadata.remainingItemCount).toBeUndefined();
    expect(withSel.metadata.continue).toBeTruthy();
    t.server.store.compact();
    const gone = await t.req(
      'GET',
      `${NS}/pods?limit=1&continue=${encodeURIComponent(p1.metadata.continue)}`,
    );
    expect(gone.status).toBe(410);
    expect(gone.body.reason).toBe('Expired');
    expect(gone.body.metadata.continue).toBeTruthy();
    const exact = await t.req(
      'GET',
      `${NS}/pods?resourceVersion=${p1.metadata.resourceVersion}&resourceVersionMatch=Exact`,
    );
    expect(exact.status).toBe(410);
    expect(exact.body.message).toBe('The resourceVersion for the provided list is too old.');
    const bad = await t.req('GET', `${NS}/pods?continue=garbage`);
    expect(bad.status).toBe(400);
  });

  it('validates resourceVersionMatch and serves an exact list from history', async () => {
    const r = await t.req('GET', `${NS}/pods?resourceVersionMatch=NotOlderThan`);
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    );
    const before = (await t.req('GET', `${NS}/configmaps`)).body.metadata.resourceVersion;
    await t.req('POST', `${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'later' },
    });
    const old = await t.req('GET', `${NS}/configmaps?resourceVersion=${before}&resourceVersionMatch=Exact`);
    expect(old.status).toBe(200);
    expect(names(old.body)).toEqual([]);
    expect(old.body.metadata.resourceVersion).toBe(before);
  });

  it('C38: a list with resourceVersion and limit (no resourceVersionMatch) is an exact read of that RV, or 410 once compacted', async () => {
    await t.req('POST', `${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c38' },
      data: { v: '1' },
    });
    const at = (await t.req('GET', `${NS}/configmaps`)).body.metadata.resourceVersion;
    await t.req(
      'PATCH',
      `${NS}/configmaps/c38`,
      { data: { v: '2' } },
      { 'content-type': 'application/merge-patch+json' },
    );
    await t.req('POST', `${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c38b' },
    });
    const old = await t.req('GET', `${NS}/configmaps?resourceVersion=${at}&limit=500`);
    expect(old.status).toBe(200);
    expect(old.body.metadata.resourceVersion).toBe(at);
    expect(names(old.body)).not.toContain('c38b');
    expect(old.body.items.find((i: Json) => i.metadata.name === 'c38').data).toEqual({ v: '1' });
    // without a limit the same RV means "not older than": the current state
    const latest = await t.req('GET', `${NS}/configmaps?resourceVersion=${at}`);
    expect(names(latest.body)).toContain('c38b');
    expect(Number(latest.body.metadata.resourceVersion)).toBeGreaterThan(Number(at));
    t.server.store.compact();
    const gone = await t.req('GET', `${NS}/configmaps?resourceVersion=${at}&limit=500`);
    expect(gone.status).toBe(410);
    expect(gone.body.reason).toBe('Expired');
    expect(gone.body.message).toBe('The resourceVersion for the provided list is too old.');
  });

  it('returns a Table for kubectl and PartialObjectMetadataList for metadata clients', async () => {
    const table = await t.req('GET', `${NS}/pods`, undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
    });
    expect(table.body.kind).toBe('Table');
    expect(table.body.columnDefinitions.map((c: Json) => c.name).slice(0, 5)).toEqual([
      'Name',
      'Ready',
      'Status',
      'Restarts',
      'Age',
    ]);
    expect(table.body.rows[0].cells.slice(0, 3)).toEqual(['a', '0/1', 'Pending']);
    expect(table.body.rows[0].object.kind).toBe('PartialObjectMetadata');
    const meta = await t.req('GET', `${NS}/pods`, undefined, {
      accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
    });
    expect(meta.body.kind).toBe('PartialObjectMetadataList');
    expect(meta.body.items[0].spec).toBeUndefined();
    const proto = await t.req('GET', `${NS}/pods`, undefined, {
      accept: 'application/vnd.kubernetes.protobuf',
    });
    expect(proto.status).toBe(406);
  });
});

describe('watch: resourceVersion, selectors, bookmarks, history, initial events', () => {
  let t: TestServer;
  // a fresh server per test: tests write objects (and compact) that others list
  beforeEach(async () => {
    t = await startTestServer();
  });
  afterEach(async () => {
    await t.close();
  });
  const cm = (name: string, labels: Record<string, string> = {}) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labels },
  });

  it('sends synthetic ADDED events without a resourceVersion, then live events', async () => {
    await t.req('POST', `${NS}/configmaps`, cm('existing'));
    const w = await t.watch(`${NS}/configmaps?watch=true`);
    await w.until((ev) => ev.some((e) => e.object.metadata.name === 'existing'));
    await t.req('POST', `${NS}/configmaps`, cm('live'));
    await w.until((ev) => ev.some((e) => e.object.metadata.name === 'live'));
    expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'ADDED']);
    w.close();
  });

  it('turns selector transitions into ADDED/DELETED and the DELETED object carries the new RV', async () => {
    const rv = (await t.req('GET', `${NS}/configmaps`)).body.metadata.resourceVersion;
    const w = await t.watch(`${NS}/configmaps?watch=true&resourceVersion=${rv}&labelSelector=sel%3Dyes`);
    await t.req('POST', `${NS}/configmaps`, cm('s1', { sel: 'no' }));
    const p = { 'content-type': 'application/merge-patch+json' };
    await t.req('PATCH', `${NS}/configmaps/s1`, { metadata: { labels: { sel: 'yes' } } }, p);
    const left = await t.req('PATCH', `${NS}/configmaps/s1`, { metadata: { labels: { sel: 'no' } } }, p);
    await w.until((ev) => ev.length >= 2);
    expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
    expect(w.events[1].object.metadata.resourceVersion).toBe(left.body.metadata.resourceVersion);
    w.close();
  });

  it('ends with timeoutSeconds cleanly; a watch of a quiet resource gets no bookmark (as kube-apiserver)', async () => {
    const rv = (await t.req('GET', `${NS}/configmaps`)).body.metadata.resourceVersion;
    const w = await t.watch(
      `${NS}/configmaps?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=1`,
    );
    await w.ended;
    // the recorded watch-timeout-2s golden: no bookmark is due in a watch's last 2 s (watch-bookmarks.test.ts)
    expect(w.events).toEqual([]);
    expect(w.raw()).toBe('');
  });

  it('gives 200 and an ERROR 410 event for an RV older than the history window, and after compaction alike', async () => {
    const rv = (await t.req('GET', `${NS}/configmaps`)).body.metadata.resourceVersion;
    for (const n of ['h1', 'h2', 'h3']) await t.req('POST', `${NS}/configmaps`, cm(n));
    t.server.store.setWatchHistoryLimit(1);
    const w = await t.watch(`${NS}/configmaps?watch=true&resourceVersion=${rv}`);
    expect(w.status).toBe(200);
    await w.ended;
    expect(w.events).toHaveLength(1);
    expect(w.events[0].type).toBe('ERROR');
    expect(w.events[0].object).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Expired',
      code: 410,
    });
    expect(w.events[0].object.message).toMatch(/^too old resource version: \d+ \(\d+\)$/);
    t.server.store.setWatchHistoryLimit(10000);
    t.server.store.compact();
    const c = await t.watch(`${NS}/configmaps?watch=true&resourceVersion=${rv}`);
    expect(c.status).toBe(200);
    await c.ended;
    expect(c.events.map((e) => [e.type, e.object.reason, e.object.code])).toEqual([
      ['ERROR', 'Expired', 410],
    ]);
  });

  it('sends initial events then the k8s.io/initial-events-end bookmark (sendInitialEvents)', async () => {
    await t.req('POST', `${NS}/configmaps`, cm('initial'));
    const w = await t.watch(
      `${NS}/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
    );
    await w.until((ev) => ev.some((e) => e.type === 'BOOKMARK'));
    const idx = w.events.findIndex((e) => e.type === 'BOOKMARK');
    expect(w.events.slice(0, idx).every((e) => e.type === 'ADDED')).toBe(true);
    expect(idx).toBeGreaterThan(0);
    expect(w.events[idx].object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
    w.close();
    const bad = await t.req(
      'GET',
      `${NS}/configmaps?watch=true&resourceVersionMatch=NotOlderThan&resourceVersion=0`,
    );
    expect(bad.status).toBe(422);
  });

  it('watch of one object by name with resourceVersion=0 starts with its current state', async () => {
    await t.req('POST', `${NS}/configmaps`, cm('single'));
    const w = await t.watch(
      `${NS}/configmaps?watch=true&resourceVersion=0&fieldSelector=metadata.name%3Dsingle`,
    );
    await w.until((ev) => ev.length >= 1);
    expect(w.events.map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'single']]);
    w.close();
  });
});
