// Bookmarks as kube-apiserver 1.32's watch cache sends them (storage/cacher: cacheWatcher.nextBookmarkTime,
// Cacher.dispatchEvents, cacheWatcher.process), driven by a fake server clock: a watch is due every minute and
// 2 s before its deadline, and gets a BOOKMARK only when its resource's watch cache moved past the RV it
// started from (another object of the resource changed, a consistent list, etcd's 10-minute progress
// notification). Each test uses its own namespaces; the ordering of a marker event after the clock step shows
// what was (not) written at that step, since the server writes a watch's frames in order.

import { FakeClock } from '@kubeloop/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTestServer, type TestServer } from './helpers.js';

const clock = new FakeClock();
let t: TestServer;
let nsSeq = 0;
beforeAll(async () => {
  t = await startTestServer({ clock });
});
afterAll(async () => {
  await t.close();
});

const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
async function namespace(): Promise<string> {
  const name = `bm-${++nsSeq}-${Math.random().toString(36).slice(2, 7)}`;
  expect((await t.req('POST', '/api/v1/namespaces', { metadata: { name } })).status).toBe(201);
  return name;
}
async function createCm(ns: string, name: string): Promise<string> {
  const r = await t.req('POST', cms(ns), { metadata: { name } });
  expect(r.status).toBe(201);
  return r.body.metadata.resourceVersion;
}
async function createPod(ns: string, name: string): Promise<string> {
  const r = await t.req('POST', `/api/v1/namespaces/${ns}/pods`, {
    metadata: { name },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
  });
  expect(r.status).toBe(201);
  return r.body.metadata.resourceVersion;
}
const summary = (events: Json[]) =>
  events.map(
    (e) => `${e.type} ${e.type === 'BOOKMARK' ? e.object.metadata.resourceVersion : e.object.metadata.name}`,
  );

/** Create a configmap in the watched namespace and wait for its event: everything written before it has arrived. */
async function marker(w: { until: (p: (ev: Json[]) => boolean) => Promise<void> }, ns: string, name: string) {
  await createCm(ns, name);
  await w.until((ev) => ev.some((e) => e.type === 'ADDED' && e.object.metadata.name === name));
}

describe('watch bookmarks (kube-apiserver 1.32 watch cache)', () => {
  it('a quiet resource gets no bookmark at all: not every minute, not before the deadline, not at the end', async () => {
    const ns = await namespace();
    const rv = (await t.req('GET', cms(ns))).body.metadata.resourceVersion;
    const w = await t.watch(
      `${cms(ns)}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=300`,
    );
    // other resources changing do not move the configmaps' watch cache
    await createPod(ns, 'p1');
    clock.step(299_000);
    await marker(w, ns, 'm1');
    expect(summary(w.events)).toEqual(['ADDED m1']);
    clock.step(1_000);
    await w.ended;
    expect(summary(w.events)).toEqual(['ADDED m1']);
  });

  it('after another object of the resource changes, a due watch gets a BOOKMARK with that RV, every minute', async () => {
    const ns = await namespace();
    const other = await namespace();
    const rv = (await t.req('GET', cms(ns))).body.metadata.resourceVersion;
    const w = await t.watch(
      `${cms(ns)}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=300`,
    );
    const otherRv = await createCm(other, 'elsewhere');
    clock.step(59_999);
    await marker(w, ns, 'm1');
    const m1 = w.events[0].object.metadata.resourceVersion;
    clock.step(1);
    await w.until((ev) => ev.length === 2);
    clock.step(60_000);
    await w.until((ev) => ev.length === 3);
    expect(summary(w.events)).toEqual(['ADDED m1', `BOOKMARK ${m1}`, `BOOKMARK ${m1}`]);
    expect(Number(m1)).toBeGreaterThan(Number(otherRv));
    expect(w.events[1].object).toEqual({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { resourceVersion: m1, creationTimestamp: null },
    });
    w.close();
  });

  it('the last bookmark comes 2 s before the deadline and the stream then ends without one', async () => {
    const ns = await namespace();
    const other = await namespace();
    const rv = (await t.req('GET', cms(ns))).body.metadata.resourceVersion;
    const w = await t.watch(
      `${cms(ns)}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=10`,
    );
    await createCm(other, 'elsewhere');
    clock.step(7_999);
    await marker(w, ns, 'm1');
    const m1 = w.events[0].object.metadata.resourceVersion;
    clock.step(1);
    await w.until((ev) => ev.length === 2);
    clock.step(2_000);
    await w.ended;
    expect(summary(w.events)).toEqual(['ADDED m1', `BOOKMARK ${m1}`]);
  });

  it('timeoutSeconds=2 ends with no bookmark even when the watch cache moved (the recorded watch-timeout-2s)', async () => {
    const ns = await namespace();
    const other = await namespace();
    const rv = (await t.req('GET', cms(ns))).body.metadata.resourceVersion;
    const w = await t.watch(
      `${cms(ns)}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=2`,
    );
    await createCm(other, 'elsewhere');
    clock.step(2_000);
    await w.ended;
    expect(w.events).toEqual([]);
  });

  it('without allowWatchBookmarks no bookmark is sent', async () => {
    const ns = await namespace();
    const other = await namespace();
    const rv = (await t.req('GET', cms(ns))).body.metadata.resourceVersion;
    const w = await t.watch(`${cms(ns)}?watch=true&resourceVersion=${rv}&timeoutSeconds=300`);
    await createCm(other, 'elsewhere');
    clock.step(120_000);
    await marker(w, ns, 'm1');
    expect(summary(w.events)).toEqual(['ADDED m1']);
    w.close();
  });

  it('a consistent list moves the watch cache to the current RV; a list at resourceVersion=0 does not', async () => {
    const ns = await namespace();
    const rv = (await t.req('GET', cms(ns))).body.metadata.resourceVersion;
    const w = await t.watch(
      `${cms(ns)}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=600`,
    );
    const podRv = await createPod(ns, 'p1');
    expect((await t.req('GET', `${cms(ns)}?resourceVersion=0`)).status).toBe(200);
    clock.step(60_000);
    const consistent = await t.req('GET', cms(ns));
    expect(Number(consistent.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(podRv));
    clock.step(60_000);
    await w.until((ev) => ev.length === 1);
    await marker(w, ns, 'm1');
    expect(summary(w.events)).toEqual([`BOOKMARK ${consistent.body.metadata.resourceVersion}`, 'ADDED m1']);
    w.close();
  });

  it("etcd's 10-minute progress notification moves a quiet resource's watch cache", async () => {
    const ns = await namespace();
    const rv = (await t.req('GET', cms(ns))).body.metadata.resourceVersion;
    const w = await t.watch(
      `${cms(ns)}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=1800`,
    );
    const podRv = await createPod(ns, 'p1');
    // etcd skips a tick for a watch that got events since the previous one: two ticks leave one quiet interval
    clock.step(1_260_000);
    await w.until((ev) => ev.length >= 1);
    await marker(w, ns, 'm1');
    const bookmarks = w.events.filter((e) => e.type === 'BOOKMARK');
    expect(bookmarks.length).toBeGreaterThanOrEqual(1);
    expect(Number(bookmarks[0].object.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(podRv));
    expect(w.events.at(-1).object.metadata.name).toBe('m1');
    w.close();
  });

  it('a streaming list gets its end bookmark at once, then periodic ones only past its RV', async () => {
    const ns = await namespace();
    const other = await namespace();
    await createCm(ns, 'a');
    const w = await t.watch(
      `${cms(ns)}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=300`,
    );
    await w.until((ev) => ev.length === 2);
    const end = w.events[1].object;
    expect(end.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
    clock.step(1_000); // due at the next tick of the bookmark timer: the cache has not moved, nothing
    const otherRv = await createCm(other, 'elsewhere');
    clock.step(59_000);
    await marker(w, ns, 'm1');
    expect(summary(w.events)).toEqual(['ADDED a', `BOOKMARK ${end.metadata.resourceVersion}`, 'ADDED m1']);
    clock.step(1_000);
    await w.until((ev) => ev.length === 4);
    expect(Number(w.events[3].object.metadata.resourceVersion)).toBeGreaterThan(Number(otherRv));
    w.close();
  });
});
