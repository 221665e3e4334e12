import { getEventListeners, setMaxListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { withDeadline } from '../src/index.js';
import { FakeClock } from '../src/testing.js';

describe('withDeadline', () => {
  it('aborts with a TimeoutError when the time is up, and says it timed out', () => {
    const clock = new FakeClock();
    const d = withDeadline(undefined, 100, clock);
    clock.step(99);
    expect(d.signal.aborted).toBe(false);
    clock.step(1);
    expect(d.signal.aborted).toBe(true);
    expect((d.signal.reason as DOMException).name).toBe('TimeoutError');
    expect(d.timedOut).toBe(true);
  });

  it('aborts with the caller signal reason when the caller aborts first, and cancels its timer', () => {
    const clock = new FakeClock();
    const caller = new AbortController();
    const d = withDeadline(caller.signal, 100, clock);
    caller.abort(new Error('stop'));
    expect((d.signal.reason as Error).message).toBe('stop');
    expect(d.timedOut).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('is aborted at once for an already aborted caller signal', () => {
    const caller = new AbortController();
    caller.abort('gone');
    expect(withDeadline(caller.signal, 100).signal.reason).toBe('gone');
  });

  it('leaves no listener on a long-lived caller signal after dispose or after firing', () => {
    const clock = new FakeClock();
    const caller = new AbortController();
    setMaxListeners(2000, caller.signal);
    for (let i = 0; i < 1000; i++) withDeadline(caller.signal, 100, clock).dispose();
    for (let i = 0; i < 1000; i++) withDeadline(caller.signal, 100, clock);
    clock.step(100);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('never aborts after dispose, and a timeout of 0 or Infinity means no deadline', () => {
    const clock = new FakeClock();
    const d = withDeadline(undefined, 100, clock);
    d.dispose();
    d.dispose();
    clock.step(1000);
    expect(d.signal.aborted).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
    withDeadline(undefined, 0, clock);
    withDeadline(undefined, Number.POSITIVE_INFINITY, clock);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('fires on the real clock even when nothing but the returned object references it', async () => {
    const d = withDeadline(new AbortController().signal, 5);
    await new Promise<void>((resolve) => d.signal.addEventListener('abort', () => resolve()));
    expect(d.timedOut).toBe(true);
  });
});
