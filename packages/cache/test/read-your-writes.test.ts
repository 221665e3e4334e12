import type { KubeObject } from '@kubeloop/client';
import { FakeClock } from '@kubeloop/core/testing';
import { describe, expect, it } from 'vitest';
import { ReadYourWrites } from '../src/index.js';

const cm = (name: string, rv: string, uid = 'u1'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace: 'ns', name, resourceVersion: rv, uid },
});
const K = 'v1/ConfigMap';
const flush = () => new Promise((r) => setImmediate(r));

function tracker(timeoutMs = 1000) {
  const clock = new FakeClock();
  return { clock, ryow: new ReadYourWrites({ clock, timeoutMs }) };
}

/** Tracks a promise's settlement without awaiting it. */
function settled(p: Promise<void>): { done: boolean } {
  const s = { done: false };
  void p.then(() => {
    s.done = true;
  });
  return s;
}

describe('ReadYourWrites (opaque resourceVersions: equality or a same-uid delete only)', () => {
  it('a read waits until the informer stores exactly the written version; other versions of the key do not end it', async () => {
    const { ryow } = tracker();
    ryow.beginWrite(K, () => undefined)(cm('a', '7'));
    const w = settled(ryow.waitForKey(K, 'ns/a'));
    ryow.observe(K, 'ns/a', cm('a', '6'), false); // an older event, delivered late
    ryow.observe(K, 'ns/b', cm('b', '7'), false); // the same version string on another key
    await flush();
    expect(w.done).toBe(false);
    ryow.observe(K, 'ns/a', cm('a', '7'), false);
    await flush();
    expect(w.done).toBe(true);
    expect(ryow.stats()).toMatchObject({ pending: 0, waits: { observed: 1, timeout: 0, aborted: 0 } });
    // Nothing pending: the next read does not wait.
    const next = settled(ryow.waitForKey(K, 'ns/a'));
    await flush();
    expect(next.done).toBe(true);
  });

  it('a version stored while the write was in flight (the watch was faster than the reply) counts at once', async () => {
    const { ryow } = tracker();
    const end = ryow.beginWrite(K, () => cm('a', '9')); // the store has moved on past our version already
    ryow.observe(K, 'ns/a', cm('a', '8'), false);
    ryow.observe(K, 'ns/a', cm('a', '9'), false);
    end(cm('a', '8'));
    expect(ryow.hasPending(K, 'ns/a')).toBe(false);
    // The store already holds the written version: nothing to wait for either.
    ryow.beginWrite(K, () => cm('a', '10'))(cm('a', '10'));
    expect(ryow.hasPending(K)).toBe(false);
  });

  it('a delete of the same object (same uid) ends the wait; a delete of another incarnation does not', async () => {
    const { ryow } = tracker();
    ryow.beginWrite(K, () => undefined)(cm('a', '5', 'u1'));
    const w = settled(ryow.waitForKind(K, 'ns'));
    ryow.observe(K, 'ns/a', cm('a', '3', 'u0'), true);
    await flush();
    expect(w.done).toBe(false);
    ryow.observe(K, 'ns/a', cm('a', '6', 'u1'), true);
    await flush();
    expect(w.done).toBe(true);
  });

  it('the wait is bounded: past timeoutMs the read goes on (counted as a timeout), and an old write holds no later read back', async () => {
    const { ryow, clock } = tracker(1000);
    ryow.beginWrite(K, () => undefined)(cm('a', '5'));
    const w = settled(ryow.waitForKey(K, 'ns/a'));
    clock.step(999);
    await flush();
    expect(w.done).toBe(false);
    clock.step(1);
    await flush();
    expect(w.done).toBe(true);
    expect(ryow.stats().waits).toEqual({ observed: 0, timeout: 1, aborted: 0 });
    const later = settled(ryow.waitForKey(K, 'ns/a'));
    await flush();
    expect(later.done).toBe(true);
  });

  it('an aborted signal ends the wait; a list waits only for its namespace; a later write replaces the earlier', async () => {
    const { ryow } = tracker();
    ryow.beginWrite(K, () => undefined)(cm('a', '5'));
    const ac = new AbortController();
    const w = settled(ryow.waitForKey(K, 'ns/a', ac.signal));
    ac.abort();
    await flush();
    expect(w.done).toBe(true);
    expect(ryow.stats().waits.aborted).toBe(1);
    const other = settled(ryow.waitForKind(K, 'other'));
    await flush();
    expect(other.done).toBe(true);
    ryow.beginWrite(K, () => undefined)(cm('a', '6'));
    expect(ryow.stats().pending).toBe(1);
    const w2 = settled(ryow.waitForKey(K, 'ns/a'));
    ryow.observe(K, 'ns/a', cm('a', '5'), false);
    await flush();
    expect(w2.done).toBe(false);
    ryow.observe(K, 'ns/a', cm('a', '6'), false);
    await flush();
    expect(w2.done).toBe(true);
  });

  it('a failed write records nothing; a bad timeoutMs is refused', () => {
    const { ryow } = tracker();
    ryow.beginWrite(K, () => undefined)();
    expect(ryow.stats().pending).toBe(0);
    expect(() => new ReadYourWrites({ timeoutMs: -1 })).toThrow(/timeoutMs/);
  });
});
