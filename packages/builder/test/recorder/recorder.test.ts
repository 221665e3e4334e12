import { ConfigMap, newClient } from '@kubeloop/client';
import { FakeClock } from '@kubeloop/core/testing';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type EventV1, EventV1Kind } from '../../src/recorder/event.js';
import { EventBroadcaster } from '../../src/recorder/recorder.js';

let server: ApiServer;
let client: ReturnType<typeof newClient>;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  server = await startApiServer();
  client = newClient({
    host: server.url,
    tlsClientConfig: { caData: server.caPem },
    bearerToken: server.token,
    qps: -1,
    burst: 0,
    timeoutMs: 0,
    userAgent: 'recorder-test',
  });
});
afterEach(async () => {
  server.faults.reset();
  while (cleanups.length) await cleanups.pop()?.();
});
afterAll(async () => {
  await client?.close();
  await server?.stop();
});

let seq = 0;
async function target() {
  seq += 1;
  return client.create(ConfigMap, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace: 'default', name: `target-${seq}` },
  });
}

async function eventsAbout(name: string): Promise<EventV1[]> {
  const list = await client.list(EventV1Kind, { namespace: 'default' });
  return list.items.filter((e) => e.regarding?.name === name);
}

function broadcaster(extra: Partial<ConstructorParameters<typeof EventBroadcaster>[0]> = {}) {
  const b = new EventBroadcaster({ client, hostname: 'host-1', ...extra });
  cleanups.push(() => b.shutdown());
  return b;
}

describe('event recorder (client-go tools/events, events.k8s.io/v1) against envtest', () => {
  it('writes an events.k8s.io/v1 Event with every field', async () => {
    const cm = await target();
    const rec = broadcaster().newRecorder('widget-controller');
    rec.event(cm, 'Normal', 'Synced', 'Reconcile', 'all good');
    await vi.waitFor(async () => expect(await eventsAbout(cm.metadata?.name ?? '')).toHaveLength(1));
    const [ev] = await eventsAbout(cm.metadata?.name ?? '');
    expect(ev).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      reportingController: 'widget-controller',
      reportingInstance: 'widget-controller-host-1',
      action: 'Reconcile',
      reason: 'Synced',
      note: 'all good',
      type: 'Normal',
      regarding: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        namespace: 'default',
        name: cm.metadata?.name,
        uid: cm.metadata?.uid,
      },
    });
    expect(ev?.metadata?.namespace).toBe('default');
    expect(ev?.eventTime).toMatch(/\.\d{6}Z$/);
    expect(ev?.series).toBeUndefined();
  });

  it('a note over 1024 UTF-8 bytes is cut to at most 1024 bytes on a character boundary and accepted (the API counts bytes)', async () => {
    // kube-apiserver: len(event.Message) > NoteLengthLimit (1024) in pkg/apis/core/validation/events.go, Go
    // len = bytes. 700 "é" are 700 JS characters but 1400 bytes; "日本" are 3 bytes each, "😀" 4 (2 JS units).
    const notes = ['é'.repeat(700), `${'a'.repeat(1023)}日本`, '😀'.repeat(300)];
    const targets = [];
    const rec = broadcaster().newRecorder('widget-controller');
    for (const note of notes) {
      const cm = await target();
      targets.push(cm.metadata?.name ?? '');
      rec.event(cm, 'Warning', 'Failed', 'Reconcile', note);
    }
    for (const [i, name] of targets.entries()) {
      await vi.waitFor(async () => expect(await eventsAbout(name)).toHaveLength(1), { timeout: 5000 });
      const note = (await eventsAbout(name))[0]?.note ?? '';
      expect(Buffer.byteLength(note, 'utf8')).toBeLessThanOrEqual(1024);
      expect(notes[i]?.startsWith(note)).toBe(true);
      expect(note).not.toMatch(/\uFFFD/);
    }
    expect((await eventsAbout(targets[0] ?? ''))[0]?.note).toBe('é'.repeat(512));
    expect((await eventsAbout(targets[1] ?? ''))[0]?.note).toBe('a'.repeat(1023));
    expect((await eventsAbout(targets[2] ?? ''))[0]?.note).toBe('😀'.repeat(256));
  });

  it('C42: 100 identical warnings become one Event: created on the first, series started on the second, the count refreshed on the (injected) clock — 3 writes, counted at the server', async () => {
    const cm = await target();
    const name = cm.metadata?.name ?? '';
    const clock = new FakeClock();
    const b = broadcaster({ clock });
    const rec = b.newRecorder('widget-controller');
    const t0 = Date.now();
    const writes = () =>
      server.faults
        .requests({ group: 'events.k8s.io', resource: 'events', since: t0 })
        .filter((r) => r.verb !== 'list');
    rec.event(cm, 'Warning', 'FailedCreate', 'Create', 'attempt 0 failed');
    await vi.waitFor(async () => expect(await eventsAbout(name)).toHaveLength(1));
    for (let i = 1; i < 100; i++) {
      clock.step(600); // 100 occurrences over a minute
      rec.event(cm, 'Warning', 'FailedCreate', 'Create', `attempt ${i} failed`);
    }
    await vi.waitFor(async () => expect((await eventsAbout(name))[0]?.series?.count).toBe(2));
    expect(writes().map((r) => r.verb)).toEqual(['create', 'patch']);
    // The refresh (30 min) writes the count once.
    clock.step(30 * 60_000);
    await vi.waitFor(async () => expect((await eventsAbout(name))[0]?.series?.count).toBe(100));
    const events = await eventsAbout(name);
    expect(events).toHaveLength(1);
    expect(events[0]?.note).toBe('attempt 0 failed');
    expect(writes().map((r) => r.verb)).toEqual(['create', 'patch', 'patch']);
    expect(b.stats()).toMatchObject({ recorded: 100, dropped: 0, failed: 0, filtered: 0, writes: 3 });
  });

  it('C42: a series not observed for seriesFinishMs gets its last count written and is finished: a later repeat is a new Event', async () => {
    const cm = await target();
    const name = cm.metadata?.name ?? '';
    const clock = new FakeClock();
    const b = broadcaster({ clock });
    const rec = b.newRecorder('widget-controller');
    rec.event(cm, 'Warning', 'BackOff', 'Sync', 'n 0');
    await vi.waitFor(async () => expect(await eventsAbout(name)).toHaveLength(1));
    for (let i = 1; i < 10; i++) rec.event(cm, 'Warning', 'BackOff', 'Sync', `n ${i}`);
    await vi.waitFor(async () => expect((await eventsAbout(name))[0]?.series?.count).toBe(2));
    clock.step(6 * 60_000);
    await vi.waitFor(async () => expect((await eventsAbout(name))[0]?.series?.count).toBe(10));
    rec.event(cm, 'Warning', 'BackOff', 'Sync', 'again');
    await vi.waitFor(async () => expect(await eventsAbout(name)).toHaveLength(2));
    expect(b.stats().writes).toBe(4);
  });

  it('C42: the spam filter lets one object start spamBurst new Events, then one per spamRefillMs; repeats are never filtered', async () => {
    const cm = await target();
    const name = cm.metadata?.name ?? '';
    const clock = new FakeClock();
    const b = broadcaster({ clock, spamBurst: 3, spamRefillMs: 60_000 });
    const rec = b.newRecorder('widget-controller');
    for (let i = 0; i < 10; i++) rec.event(cm, 'Normal', `Reason${i}`, 'Do', 'x');
    for (let i = 0; i < 5; i++) rec.event(cm, 'Normal', 'Reason0', 'Do', 'x'); // repeats of an admitted Event
    await vi.waitFor(async () => expect(await eventsAbout(name)).toHaveLength(3));
    expect(b.stats().filtered).toBe(7);
    clock.step(60_000);
    rec.event(cm, 'Normal', 'Later', 'Do', 'x');
    rec.event(cm, 'Normal', 'Later2', 'Do', 'x');
    await vi.waitFor(async () => expect(await eventsAbout(name)).toHaveLength(4));
    expect(b.stats().filtered).toBe(8);
    await b.shutdown();
    const first = (await eventsAbout(name)).find((e) => e.reason === 'Reason0');
    expect(first?.series?.count).toBe(6);
  });

  it('a repeat about a changed object (another resourceVersion) or of another type is a new Event, as client-go keys the whole reference', async () => {
    const cm = await target();
    const name = cm.metadata?.name ?? '';
    const rec = broadcaster().newRecorder('widget-controller');
    rec.event(cm, 'Normal', 'ConfigMapSynced', 'Reconcile', 'created');
    rec.event(cm, 'Normal', 'ConfigMapSynced', 'Reconcile', 'created again'); // same resourceVersion: a repeat
    const changed = await client.update(ConfigMap, { ...cm, data: { a: '1' } });
    rec.event(changed, 'Normal', 'ConfigMapSynced', 'Reconcile', 'updated');
    rec.event(changed, 'Warning', 'ConfigMapSynced', 'Reconcile', 'updated, with a warning');
    await vi.waitFor(async () => expect(await eventsAbout(name)).toHaveLength(3));
    const events = await eventsAbout(name);
    const byNote = new Map(events.map((e) => [e.note, e]));
    expect([...byNote.keys()].sort()).toEqual(['created', 'updated', 'updated, with a warning']);
    expect(byNote.get('created')?.regarding.resourceVersion).toBe(cm.metadata?.resourceVersion);
    expect(byNote.get('updated')?.regarding.resourceVersion).toBe(changed.metadata?.resourceVersion);
    await vi.waitFor(async () => {
      const created = (await eventsAbout(name)).find((e) => e.note === 'created');
      expect(created?.series?.count).toBe(2);
    });
  });

  it('different reasons are different Events; an unsupported type is dropped; recording never throws', async () => {
    const cm = await target();
    const rec = broadcaster().newRecorder('c');
    rec.event(cm, 'Normal', 'A', 'Do', 'x');
    rec.event(cm, 'Normal', 'B', 'Do', 'x');
    rec.event(cm, 'Bogus' as 'Normal', 'C', 'Do', 'x');
    expect(() => rec.event({ metadata: {} }, 'Normal', 'D', 'Do', 'x')).not.toThrow();
    await vi.waitFor(async () => expect(await eventsAbout(cm.metadata?.name ?? '')).toHaveLength(2));
    expect((await eventsAbout(cm.metadata?.name ?? '')).map((e) => e.reason).sort()).toEqual(['A', 'B']);
  });

  it('the queue is bounded: past queueSize distinct Events are dropped and counted, never blocking the caller', async () => {
    const cm = await target();
    // Hold the writes so the queue fills.
    server.faults.delayRequests({ match: { group: 'events.k8s.io', resource: 'events' }, delayMs: 300 });
    const b = broadcaster({ queueSize: 5 });
    const rec = b.newRecorder('c');
    // Never blocking, without a stopwatch (a loaded machine can preempt any loop): every call returns nothing to
    // wait on, and the overflow is already counted when the loop ends, while every write is still held.
    for (let i = 0; i < 20; i++) expect(rec.event(cm, 'Normal', `Reason${i}`, 'Do', 'x')).toBeUndefined();
    expect(b.stats().dropped).toBeGreaterThanOrEqual(20 - 6);
    await b.shutdown();
    const s = b.stats();
    expect(s.recorded).toBe(20);
    expect(s.dropped).toBeGreaterThanOrEqual(20 - 6);
    expect(s.dropped + (await eventsAbout(cm.metadata?.name ?? '')).length).toBe(20);
  });

  it('shutdown flushes a series waiting for its refresh (the last count is not lost); a 404 on PATCH re-creates the Event', async () => {
    const cm = await target();
    const name = cm.metadata?.name ?? '';
    const b = broadcaster({ clock: new FakeClock() });
    const rec = b.newRecorder('c');
    rec.event(cm, 'Warning', 'Flaky', 'Do', 'x');
    await vi.waitFor(async () => expect(await eventsAbout(name)).toHaveLength(1));
    const [first] = await eventsAbout(name);
    await client.delete(EventV1Kind, { namespace: 'default', name: first?.metadata?.name ?? '' });
    rec.event(cm, 'Warning', 'Flaky', 'Do', 'x');
    rec.event(cm, 'Warning', 'Flaky', 'Do', 'x');
    await b.shutdown();
    const after = await eventsAbout(name);
    expect(after).toHaveLength(1);
    expect(after[0]?.series?.count).toBe(3);
    rec.event(cm, 'Warning', 'Flaky', 'Do', 'late');
    expect(b.stats().dropped).toBe(1);
  });
});
