// Many concurrent requests on one long-lived caller signal must not pile abort listeners on it: past 10 Node
// prints MaxListenersExceededWarning (seen in the CI log with 11 concurrent lease/ConfigMap writes of the
// sharding replicas). withDeadline subscribes through a per-signal fan-out: one listener, removed with the last.
import { getEventListeners } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
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

  it('a wait subscribed after the signal aborted during an earlier await still ends (C23: stopped while its create was in flight)', async () => {
    const stop = new AbortController();
    const runnable = async (signal: AbortSignal) => {
      await Promise.resolve().then(() => stop.abort()); // the create in flight when the stop comes
      await new Promise<void>((resolve) => onAbort(signal, () => resolve()));
      return 'stopped';
    };
    await expect(runnable(stop.signal)).resolves.toBe('stopped');
  });

  it("no test file waits on a bare addEventListener('abort'): a listener added to an already-aborted signal never fires", () => {
    // Test runnables, reconcilers and fake servers subscribe through onAbort, which calls at once when the signal
    // has aborted already (a stop that lands during an earlier await left C23's runnable waiting forever).
    // Allowed: tests of the listener mechanism itself, and the example that users copy (it checks `aborted`).
    const root = fileURLToPath(new URL('../../..', import.meta.url));
    const allowed = new Set([
      'packages/builder/test/abort-listeners.test.ts',
      'packages/core/test/abort-fanout.test.ts',
      'packages/core/test/deadline.test.ts',
      'tests/integration/test/leaks.test.ts',
      'examples/test/leader-singleton.test.ts',
    ]);
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.name === 'node_modules' || e.name === 'dist' || e.name.startsWith('.')
          ? []
          : e.isDirectory()
            ? walk(join(dir, e.name))
            : /\.(ts|mts|mjs)$/.test(e.name)
              ? [join(dir, e.name)]
              : [],
      );
    const testDirs = ['packages', 'apps', 'tests', 'examples', 'bench'].flatMap((top) =>
      readdirSync(join(root, top), { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => join(root, top, e.name, 'test'))
        .concat(top === 'tests' || top === 'examples' || top === 'bench' ? [join(root, top, 'test')] : []),
    );
    const offenders = [...new Set(testDirs)]
      .filter((d) => {
        try {
          return readdirSync(d).length > 0;
        } catch {
          return false;
        }
      })
      .flatMap(walk)
      .map((f) => relative(root, f))
      .filter((f) => !allowed.has(f))
      .filter((f) => /addEventListener\(\s*['"]abort['"]/.test(readFileSync(join(root, f), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
