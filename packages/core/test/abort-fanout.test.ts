// Many concurrent requests on one long-lived caller signal must not pile abort listeners on it: past 10 Node
// prints MaxListenersExceededWarning (seen in the CI log with 11 concurrent lease/ConfigMap writes of the
// sharding replicas). withDeadline subscribes through a per-signal fan-out: one listener, removed with the last.
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { onAbort, withDeadline } from '../src/index.js';
import { FakeClock } from '../src/testing.js';

describe('abort fan-out', () => {
  it('50 concurrent deadlines on one signal add one listener, and none once all are disposed', () => {
    const parent = new AbortController();
    const deadlines = Array.from({ length: 50 }, () => withDeadline(parent.signal, 60_000, new FakeClock()));
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    for (const d of deadlines) d.dispose();
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
  });

  it('an abort reaches every live deadline, with the caller reason, and only those', () => {
    const parent = new AbortController();
    const live = Array.from({ length: 20 }, () => withDeadline(parent.signal, 0));
    const gone = withDeadline(parent.signal, 0);
    gone.dispose();
    parent.abort(new Error('stop'));
    for (const d of live) {
      expect(d.signal.aborted).toBe(true);
      expect((d.signal.reason as Error).message).toBe('stop');
    }
    expect(gone.signal.aborted).toBe(false);
  });

  it('a deadline that times out leaves the subscription, and later subscribers still get the abort', () => {
    const clock = new FakeClock();
    const parent = new AbortController();
    const short = withDeadline(parent.signal, 10, clock);
    const long = withDeadline(parent.signal, 0, clock);
    clock.step(10);
    expect(short.timedOut).toBe(true);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    let called = 0;
    const off = onAbort(parent.signal, () => called++);
    parent.abort();
    expect(long.signal.aborted).toBe(true);
    expect(called).toBe(1);
    off();
    expect(onAbort(parent.signal, () => called++)).toBeTypeOf('function');
    expect(called).toBe(2); // already aborted: called at once
  });
});
