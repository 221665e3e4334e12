import { StatusError } from '@kubeloop/client';
import { onAbort } from '@kubeloop/core';
import { FakeClock } from '@kubeloop/core/testing';
import { ItemExponentialFailureRateLimiter, LOW_PRIORITY } from '@kubeloop/workqueue';
import { Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import {
  Controller,
  type ControllerMetricsHook,
  type ControllerOptions,
  type HandlerQueue,
  isTerminalError,
  type Logger,
  type Reconciler,
  type Request,
  TerminalError,
} from '../src/index.js';
import { controllerMetricsHook } from '../src/metrics/controller-metrics.js';
import { PushSource } from './support/config.js';

function captureLogger(lines: Array<Record<string, unknown>>, bound: Record<string, unknown> = {}): Logger {
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) =>
    lines.push({ level, ...bound, ...fields, msg });
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (b) => captureLogger(lines, { ...bound, ...b }),
  };
}

async function run(reconciler: Reconciler, options: ControllerOptions = {}) {
  const ctrl = new Controller('test', reconciler, options);
  const src = new PushSource();
  ctrl.watch(src);
  const ac = new AbortController();
  const done = ctrl.start(ac.signal);
  await vi.waitFor(() => expect(src.queue).toBeDefined());
  const q = src.queue as HandlerQueue;
  return {
    ctrl,
    q,
    ac,
    done,
    stop: async () => {
      ac.abort();
      await done;
    },
  };
}

const req = (name: string): Request => ({ namespace: 'ns', name });

describe('Controller on the test clock (controller-runtime internal/controller)', () => {
  it('requeueAfterMs comes back exactly after that time; error backoff doubles per failure', async () => {
    const clock = new FakeClock();
    const calls: Record<string, number[]> = { after: [], err: [] };
    const c = await run(
      {
        async reconcile(_ctx, r) {
          calls[r.name]?.push(clock.now());
          if (r.name === 'after' && calls.after?.length === 1) return { requeueAfterMs: 1000 };
          if (r.name === 'err' && (calls.err?.length ?? 0) < 4) throw new Error('not yet');
          return undefined;
        },
      },
      { clock, rateLimiter: new ItemExponentialFailureRateLimiter(100, 10_000) },
    );
    c.q.add(req('after'));
    c.q.add(req('err'));
    await vi.waitFor(() => expect(calls.after).toHaveLength(1));
    await vi.waitFor(() => expect(calls.err).toHaveLength(1));
    for (let t = 0; t < 1600; t += 50) {
      clock.step(50);
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
    }
    await vi.waitFor(() => expect(calls.err).toHaveLength(4));
    expect(calls.after).toEqual([0, 1000]);
    // 100, 200, 400 ms after each failure (the fake clock advances in 50 ms steps).
    expect(calls.err).toEqual([0, 100, 300, 700]);
    await c.stop();
  });

  it('reconciliationTimeoutMs aborts the reconcile signal; the timed-out reconcile is logged and retried', async () => {
    const clock = new FakeClock();
    const lines: Array<Record<string, unknown>> = [];
    let calls = 0;
    const c = await run(
      {
        async reconcile(ctx) {
          calls++;
          if (calls > 1) return;
          await new Promise<void>((_, reject) => onAbort(ctx.signal, () => reject(ctx.signal.reason)));
        },
      },
      {
        clock,
        reconciliationTimeoutMs: 5000,
        logger: captureLogger(lines),
        rateLimiter: new ItemExponentialFailureRateLimiter(1, 1),
      },
    );
    c.q.add(req('slow'));
    await vi.waitFor(() => expect(calls).toBe(1));
    clock.step(4999);
    await new Promise((r) => setImmediate(r));
    expect(lines.some((l) => l.msg === 'Reconciler error')).toBe(false);
    clock.step(1);
    await vi.waitFor(() =>
      expect(lines.some((l) => l.msg === 'Reconciler error' && l.timeoutMs === 5000)).toBe(true),
    );
    clock.step(1);
    await vi.waitFor(() => expect(calls).toBe(2));
    await c.stop();
  });

  it('controller_runtime_reconcile_timeouts_total counts reconciles whose own deadline fired (an error or not), not a stop', async () => {
    const clock = new FakeClock();
    const registry = new Registry();
    let calls = 0;
    const c = await run(
      {
        async reconcile(ctx, r) {
          calls++;
          if (r.name === 'fast') return;
          // 'slow' fails at its deadline; 'swallow' returns normally once its deadline passed.
          await new Promise<void>((resolve, reject) =>
            onAbort(ctx.signal, () => (r.name === 'slow' ? reject(ctx.signal.reason) : resolve())),
          );
        },
      },
      {
        clock,
        reconciliationTimeoutMs: 5000,
        maxConcurrentReconciles: 3,
        metrics: controllerMetricsHook(registry),
        rateLimiter: new ItemExponentialFailureRateLimiter(1_000_000, 1_000_000),
      },
    );
    const timeouts = async () =>
      (await registry.getSingleMetric('controller_runtime_reconcile_timeouts_total')?.get())?.values.find(
        (v) => v.labels.controller === 'test',
      )?.value;
    c.q.add(req('fast'));
    c.q.add(req('slow'));
    c.q.add(req('swallow'));
    await vi.waitFor(() => expect(calls).toBe(3));
    expect(await timeouts()).toBe(0);
    clock.step(5000);
    await vi.waitFor(async () => expect(await timeouts()).toBe(2));
    // A reconcile cut short by the controller's stop is no timeout.
    c.q.add(req('stopped'));
    await vi.waitFor(() => expect(calls).toBe(4));
    await c.stop();
    expect(await timeouts()).toBe(2);
  });

  it('terminal errors are not retried — also when wrapped as a cause, or made by another copy of the package', async () => {
    // The same module loaded a second time: what two installed copies of the package look like.
    const secondCopy = '../src/reconcile.ts?second-copy';
    const copy = (await import(secondCopy)) as typeof import('../src/reconcile.js');
    expect(copy.TerminalError).not.toBe(TerminalError);
    const foreign = new copy.TerminalError('from the other copy');
    expect(foreign instanceof TerminalError).toBe(true);
    expect(isTerminalError(foreign)).toBe(true);
    expect(isTerminalError(new Error('wrapped', { cause: new TerminalError('inner') }))).toBe(true);
    expect(isTerminalError(new Error('plain'))).toBe(false);
    class MyTerminal extends TerminalError {}
    expect(new TerminalError('x') instanceof MyTerminal).toBe(false);

    const clock = new FakeClock();
    const counts: Record<string, number> = {};
    const errs = [foreign, new Error('wrapped', { cause: new TerminalError('inner') })];
    const c = await run(
      {
        async reconcile(_ctx, r) {
          counts[r.name] = (counts[r.name] ?? 0) + 1;
          throw errs[Number(r.name)];
        },
      },
      { clock, rateLimiter: new ItemExponentialFailureRateLimiter(1, 1) },
    );
    c.q.add(req('0'));
    c.q.add(req('1'));
    await vi.waitFor(() => expect(counts).toEqual({ 0: 1, 1: 1 }));
    clock.step(1000);
    await new Promise((r) => setImmediate(r));
    expect(counts).toEqual({ 0: 1, 1: 1 });
    expect(c.ctrl.queue.numRequeues(req('0'))).toBe(0);
    await c.stop();
  });

  it('recoverPanic (default): a TypeError in the reconciler is logged as a panic, counted, and retried', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const outcomes: Array<{ result: string; panic: boolean }> = [];
    const metrics: ControllerMetricsHook = {
      init: () => {},
      activeWorkers: () => {},
      reconciled: (_c, o) => outcomes.push({ result: o.result, panic: o.panic }),
    };
    let calls = 0;
    const c = await run(
      {
        async reconcile() {
          if (calls++ === 0) (undefined as unknown as { x: number }).x;
        },
      },
      { logger: captureLogger(lines), metrics, rateLimiter: new ItemExponentialFailureRateLimiter(1, 1) },
    );
    c.q.add(req('p'));
    await vi.waitFor(() => expect(calls).toBe(2));
    expect(lines.some((l) => l.msg === 'Observed a panic in reconciler')).toBe(true);
    expect(outcomes).toEqual([
      { result: 'error', panic: true },
      { result: 'success', panic: false },
    ]);
    await c.stop();
  });

  it('recoverPanic: false rethrows a panic outside the controller (it would crash the process) and does not retry', async () => {
    const panic = new TypeError('reading x of undefined');
    const crashes: unknown[] = [];
    const nextTick = process.nextTick;
    // Catch only our panic where Node would raise it as an uncaught exception.
    const spy = vi.spyOn(process, 'nextTick').mockImplementation(((
      fn: (...a: unknown[]) => void,
      ...args: unknown[]
    ) =>
      nextTick.call(
        process,
        (...a: unknown[]) => {
          try {
            fn(...a);
          } catch (err) {
            if (err !== panic) throw err;
            crashes.push(err);
          }
        },
        ...args,
      )) as typeof process.nextTick);
    try {
      let calls = 0;
      const c = await run(
        {
          async reconcile() {
            calls++;
            throw panic;
          },
        },
        { recoverPanic: false, rateLimiter: new ItemExponentialFailureRateLimiter(1, 1) },
      );
      c.q.add(req('p'));
      await vi.waitFor(() => expect(crashes).toEqual([panic]));
      await c.stop();
      expect(calls).toBe(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('once stopping, workers take no more requests — a backlog is not worked off with an aborted signal', async () => {
    let release!: () => void;
    const reconciled: string[] = [];
    const c = await run({
      async reconcile(_ctx, r) {
        reconciled.push(r.name);
        if (r.name === 'first') await new Promise<void>((resolve) => (release = resolve));
      },
    });
    c.q.add(req('first'));
    await vi.waitFor(() => expect(reconciled).toEqual(['first']));
    for (let i = 0; i < 20; i++) c.q.add(req(`backlog-${i}`));
    c.ac.abort();
    release();
    await c.done;
    expect(reconciled).toEqual(['first']);
  });

  it('plain queue (which drains after shutDown): no backlog is worked off after stop', async () => {
    let release!: () => void;
    const reconciled: string[] = [];
    const c = await run(
      {
        async reconcile(_ctx, r) {
          reconciled.push(r.name);
          if (r.name === 'first') await new Promise<void>((resolve) => (release = resolve));
        },
      },
      { usePriorityQueue: false },
    );
    c.q.add(req('first'));
    await vi.waitFor(() => expect(reconciled).toEqual(['first']));
    for (let i = 0; i < 20; i++) c.q.add(req(`backlog-${i}`));
    c.ac.abort();
    release();
    await c.done;
    expect(reconciled).toEqual(['first']);
  });

  it('priority queue: low-priority (initial list, resync) requests wait behind live changes; the plain queue is FIFO', async () => {
    for (const usePriorityQueue of [true, false]) {
      let release!: () => void;
      const order: string[] = [];
      const c = await run(
        {
          async reconcile(_ctx, r) {
            order.push(r.name);
            if (r.name === 'block') await new Promise<void>((resolve) => (release = resolve));
          },
        },
        { usePriorityQueue },
      );
      c.q.add(req('block'));
      await vi.waitFor(() => expect(order).toEqual(['block']));
      for (let i = 0; i < 3; i++) c.q.add(req(`initial-${i}`), { priority: LOW_PRIORITY });
      c.q.add(req('live'));
      release();
      await vi.waitFor(() => expect(order).toHaveLength(5));
      expect(order.slice(1)).toEqual(
        usePriorityQueue
          ? ['live', 'initial-0', 'initial-1', 'initial-2']
          : ['initial-0', 'initial-1', 'initial-2', 'live'],
      );
      await c.stop();
    }
  });

  it('Result.priority: a request queued again by its result takes that priority (controller-runtime Result.Priority); absent, it keeps its own', async () => {
    const clock = new FakeClock();
    let release!: () => void;
    const order: string[] = [];
    let first = true;
    const c = await run(
      {
        async reconcile(_ctx, r) {
          order.push(r.name);
          if (r.name === 'block') await new Promise<void>((resolve) => (release = resolve));
          if (r.name === 'demoted' && first) {
            first = false;
            return { requeueAfterMs: 1000, priority: LOW_PRIORITY - 1 };
          }
          return undefined;
        },
      },
      { fairnessWindow: Number.POSITIVE_INFINITY, clock },
    );
    c.q.add(req('demoted'));
    await vi.waitFor(() => expect(order).toEqual(['demoted']));
    c.q.add(req('block'));
    await vi.waitFor(() => expect(order).toEqual(['demoted', 'block']));
    clock.step(1000);
    // 'demoted' is ready again, below the initial-list requests added next.
    for (let i = 0; i < 2; i++) c.q.add(req(`initial-${i}`), { priority: LOW_PRIORITY });
    release();
    await vi.waitFor(() => expect(order).toHaveLength(5));
    expect(order.slice(2)).toEqual(['initial-0', 'initial-1', 'demoted']);
    await c.stop();
  });

  it('Result.priority that is not a finite number is an invalid result (retried as an error)', async () => {
    const { invalidResult } = await import('../src/reconcile.js');
    expect(invalidResult({ priority: Number.NaN })?.message).toMatch(/Result.priority/);
    expect(invalidResult({ priority: '1' })?.message).toMatch(/Result.priority/);
    expect(invalidResult({ requeue: true, priority: 3 })).toBeUndefined();
  });

  it('a 409 Conflict (also as a cause) is not an error: one debug line without a stack, requeued with backoff, counted by reason; other errors still log with their stack once per failure', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const registry = new Registry();
    const conflict = new StatusError({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code: 409,
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on configmaps "x": the object has been modified',
    });
    let calls = 0;
    const c = await run(
      {
        async reconcile() {
          calls++;
          if (calls === 1) throw conflict;
          if (calls === 2) throw new Error('status update failed', { cause: conflict });
          if (calls === 3) throw new Error('boom');
          return undefined;
        },
      },
      {
        logger: captureLogger(lines),
        metrics: controllerMetricsHook(registry),
        rateLimiter: new ItemExponentialFailureRateLimiter(1, 1),
      },
    );
    c.q.add(req('x'));
    await vi.waitFor(() => expect(calls).toBe(4));
    await c.stop();
    const conflicts = lines.filter((l) => l.msg === 'Reconcile conflict, requeued with backoff');
    expect(conflicts).toHaveLength(2);
    for (const l of conflicts) {
      expect(l.level).toBe('debug');
      expect(l.err).toBeUndefined();
      expect(l.reason).toBe('Conflict');
    }
    const errors = lines.filter((l) => l.level === 'error');
    expect(errors.map((l) => l.msg)).toEqual(['Reconciler error']);
    expect((errors[0]?.err as Error | undefined)?.message).toBe('boom');
    const text = await registry.metrics();
    expect(text).toContain('kubeloop_reconcile_requeues_total{controller="test",reason="conflict"} 2');
    expect(text).toContain('controller_runtime_reconcile_errors_total{controller="test"} 1');
    expect(text).toContain('controller_runtime_reconcile_total{controller="test",result="requeue"} 2');
  });

  it('reconcile time runs from dequeue, not from enqueue', async () => {
    const clock = new FakeClock();
    const seconds: Record<string, number> = {};
    const gates: Record<string, () => void> = {};
    const c = await run(
      {
        async reconcile(_ctx, r) {
          await new Promise<void>((resolve) => (gates[r.name] = resolve));
        },
      },
      {
        clock,
        metrics: {
          init: () => {},
          activeWorkers: () => {},
          reconciled: (_c, o) => {
            seconds[Object.keys(gates).at(-1) ?? ''] ??= o.seconds;
          },
        },
      },
    );
    c.q.add(req('a'));
    await vi.waitFor(() => expect(gates.a).toBeDefined());
    c.q.add(req('b')); // waits 2 s in the queue behind a
    clock.step(2000);
    gates.a?.();
    await vi.waitFor(() => expect(gates.b).toBeDefined());
    clock.step(200);
    gates.b?.();
    await vi.waitFor(() => expect(seconds.b).toBeDefined());
    expect(seconds.a).toBe(2);
    expect(seconds.b).toBe(0.2);
    await c.stop();
  });

  it('never two concurrent reconciles of one key under 8 workers and heavy churn', async () => {
    const active = new Map<string, number>();
    let overlap = false;
    let total = 0;
    let maxParallel = 0;
    let parallel = 0;
    const c = await run(
      {
        async reconcile(_ctx, r) {
          const n = (active.get(r.name) ?? 0) + 1;
          active.set(r.name, n);
          if (n > 1) overlap = true;
          parallel++;
          maxParallel = Math.max(maxParallel, parallel);
          for (let i = 0; i < (total % 4) + 1; i++) await new Promise((res) => setImmediate(res));
          parallel--;
          active.set(r.name, (active.get(r.name) ?? 1) - 1);
          total++;
        },
      },
      { maxConcurrentReconciles: 8 },
    );
    for (let round = 0; round < 200; round++) {
      for (let k = 0; k < 10; k++) c.q.add(req(`k${(round * 7 + k) % 20}`));
      await new Promise((res) => setImmediate(res));
    }
    await vi.waitFor(() => expect(c.ctrl.queue.len()).toBe(0));
    await vi.waitFor(() => expect(parallel).toBe(0));
    await c.stop();
    expect(overlap).toBe(false);
    expect(maxParallel).toBeGreaterThan(1);
    expect(maxParallel).toBeLessThanOrEqual(8);
    expect(total).toBeGreaterThanOrEqual(20);
  });
});
