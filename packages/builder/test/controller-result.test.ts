import { FakeClock } from '@kubeloop/core/testing';
import { ItemExponentialFailureRateLimiter } from '@kubeloop/workqueue';
import { describe, expect, it, vi } from 'vitest';
import {
  Controller,
  ControllerError,
  type ControllerMetricsHook,
  type HandlerQueue,
  InvalidResultError,
  type Logger,
  type Reconciler,
  type Request,
  type Result,
  type Source,
} from '../src/index.js';

/**
 * Breaker report item 8: a reconciler returning `{ requeueAfterMs: '1000' }` (a value read from YAML or an env
 * var without `Number()`) was requeued at once — `now() + '1000'` concatenates — and ran hundreds of times a
 * second. A Result that is not a Result is now a reconcile error: logged and retried with the rate limiter's
 * backoff, as controller-runtime treats a reconcile error.
 */

class PushSource implements Source {
  queue: HandlerQueue | undefined;
  start(_signal: AbortSignal, queue: HandlerQueue): void {
    this.queue = queue;
  }
  async waitForSync(): Promise<boolean> {
    return true;
  }
}

function captureLogger(lines: Array<Record<string, unknown>>): Logger {
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) =>
    lines.push({ level, ...fields, msg });
  const log: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => log,
  };
  return log;
}

const BAD_RESULTS: unknown[] = [
  { requeueAfterMs: '1000' },
  { requeueAfterMs: Number.NaN },
  { requeueAfterMs: Number.POSITIVE_INFINITY },
  { requeueAfterMs: -1 },
  { requeueAfterMs: null },
  { requeue: 'false' },
  'requeue',
  42,
];

describe('Controller: a reconcile result that is not a Result is a reconcile error (retried with backoff)', () => {
  for (const bad of BAD_RESULTS) {
    it(`${JSON.stringify(bad) ?? String(bad)}: logged as InvalidResultError, retried after 100, 200 ms — no hot loop`, async () => {
      const clock = new FakeClock();
      const lines: Array<Record<string, unknown>> = [];
      const results: string[] = [];
      const metrics: ControllerMetricsHook = {
        init: () => {},
        activeWorkers: () => {},
        reconciled: (_c, r) => {
          results.push(r.result);
        },
      };
      const calls: number[] = [];
      const r: Reconciler = {
        async reconcile() {
          calls.push(clock.now());
          return (calls.length <= 2 ? bad : undefined) as Result;
        },
      };
      const ctrl = new Controller('result', r, {
        clock,
        logger: captureLogger(lines),
        metrics,
        rateLimiter: new ItemExponentialFailureRateLimiter(100, 10_000),
      });
      const src = new PushSource();
      ctrl.watch(src);
      const ac = new AbortController();
      const done = ctrl.start(ac.signal);
      await vi.waitFor(() => expect(src.queue).toBeDefined());
      const req: Request = { namespace: 'ns', name: 'a' };
      src.queue?.add(req);
      await vi.waitFor(() => expect(calls).toHaveLength(1));
      // Without the fake clock moving, a hot loop would run the reconcile again and again right now.
      for (let i = 0; i < 20; i++) await new Promise((res) => setImmediate(res));
      expect(calls).toHaveLength(1);
      for (let t = 0; t < 400; t += 50) {
        clock.step(50);
        await new Promise((res) => setImmediate(res));
        await new Promise((res) => setImmediate(res));
      }
      await vi.waitFor(() => expect(calls).toHaveLength(3));
      expect(calls).toEqual([0, 100, 300]);
      await vi.waitFor(() => expect(ctrl.queue.numRequeues(req)).toBe(0));
      expect(results).toEqual(['error', 'error', 'success']);
      const errs = lines.filter((l) => l.level === 'error' && l.msg === 'Reconciler error');
      expect(errs).toHaveLength(2);
      expect(errs[0]?.err).toBeInstanceOf(InvalidResultError);
      expect(errs[0]?.err).toMatchObject({ code: 'ERR_INVALID_RESULT' });
      ac.abort();
      await done;
    });
  }

  it('valid results are unchanged: 0 and undefined requeueAfterMs, requeue false, null and nothing', async () => {
    const { invalidResult } = await import('../src/reconcile.js');
    for (const ok of [
      undefined,
      null,
      {},
      { requeueAfterMs: 0 },
      { requeueAfterMs: 1.5 },
      { requeue: false },
    ])
      expect(invalidResult(ok)).toBeUndefined();
    expect(invalidResult({ requeueAfterMs: '1000' })?.message).toMatch(/requeueAfterMs.*the string "1000"/);
  });
});

describe('Controller options: numeric options are numbers of the right kind (ControllerError)', () => {
  const r: Reconciler = { reconcile: async () => undefined };
  it('refuses strings, NaN, Infinity, fractions of workers and negative timeouts, naming the option', () => {
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ maxConcurrentReconciles: '4' }, /maxConcurrentReconciles/],
      [{ maxConcurrentReconciles: Number.NaN }, /maxConcurrentReconciles/],
      [{ maxConcurrentReconciles: 1.5 }, /maxConcurrentReconciles/],
      [{ cacheSyncTimeoutMs: '1000' }, /cacheSyncTimeoutMs/],
      [{ cacheSyncTimeoutMs: Number.POSITIVE_INFINITY }, /cacheSyncTimeoutMs/],
      [{ reconciliationTimeoutMs: '5000' }, /reconciliationTimeoutMs/],
      [{ reconciliationTimeoutMs: -1 }, /reconciliationTimeoutMs/],
    ];
    for (const [options, what] of bad) {
      expect(() => new Controller('c', r, options as never), JSON.stringify(options)).toThrow(
        ControllerError,
      );
      expect(() => new Controller('c', r, options as never)).toThrow(what);
    }
  });

  it('keeps upstream meanings: 0 workers is 1, 0 reconcile timeout is none', () => {
    expect(
      () => new Controller('c', r, { maxConcurrentReconciles: 0, reconciliationTimeoutMs: 0 }),
    ).not.toThrow();
  });
});
