import { ItemExponentialFailureRateLimiter } from '@kubeloop/workqueue';
import { describe, expect, it, vi } from 'vitest';
import { Controller, type Logger, type Reconciler, type Result, TerminalError } from '../src/index.js';
import { PushSource } from './support/config.js';

/** vi.waitFor bounds: 2 ms checks, 5 s before giving up (a loaded CI box, not the expected time). */
const WAIT = { timeout: 5000, interval: 2 };

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

const fast = () => new ItemExponentialFailureRateLimiter(1, 4);

async function running(ctrl: Controller, src: PushSource) {
  const ac = new AbortController();
  ctrl.watch(src);
  const done = ctrl.start(ac.signal);
  await vi.waitFor(() => expect(src.queue, 'source start').toBeDefined(), WAIT);
  return {
    stop: async () => {
      ac.abort();
      await done;
    },
    done,
  };
}

describe('Controller', () => {
  it('retries a failing request with backoff, then forgets it on success', async () => {
    const calls: string[] = [];
    const lines: Array<Record<string, unknown>> = [];
    let failures = 3;
    const r: Reconciler = {
      async reconcile(_ctx, req) {
        calls.push(req.name);
        if (failures-- > 0) throw new Error('not yet');
      },
    };
    const ctrl = new Controller('retry', r, { rateLimiter: fast(), logger: captureLogger(lines) });
    const src = new PushSource();
    const c = await running(ctrl, src);
    src.push({ namespace: 'ns', name: 'a' });
    await vi.waitFor(() => expect(calls).toHaveLength(4), WAIT);
    await vi.waitFor(
      () => expect(ctrl.queue.numRequeues({ namespace: 'ns', name: 'a' }), 'forget').toBe(0),
      WAIT,
    );
    await c.stop();
    expect(calls).toEqual(['a', 'a', 'a', 'a']);
    const errors = lines.filter((l) => l.msg === 'Reconciler error');
    expect(errors).toHaveLength(3);
    expect(errors[0]).toMatchObject({ controller: 'retry', namespace: 'ns', name: 'a' });
    // The error is logged whole (stack and cause), not as its message.
    expect(errors[0]?.err).toBeInstanceOf(Error);
    expect(String(errors[0]?.err)).toBe('Error: not yet');
    expect(typeof errors[0]?.reconcileID).toBe('string');
  });

  it('requeueAfterMs comes back; requeue uses the rate limiter; TerminalError is not retried', async () => {
    const seen: Record<string, number> = {};
    const r: Reconciler = {
      async reconcile(_ctx, req): Promise<Result | undefined> {
        seen[req.name] = (seen[req.name] ?? 0) + 1;
        const n = seen[req.name]!;
        if (req.name === 'after' && n < 3) return { requeueAfterMs: 5 };
        if (req.name === 'again' && n < 3) return { requeue: true };
        if (req.name === 'terminal') throw new TerminalError('give up');
        return undefined;
      },
    };
    const ctrl = new Controller('results', r, { rateLimiter: fast() });
    const src = new PushSource();
    const c = await running(ctrl, src);
    src.push(
      { namespace: '', name: 'after' },
      { namespace: '', name: 'again' },
      { namespace: '', name: 'terminal' },
    );
    await vi.waitFor(() => expect(seen).toMatchObject({ after: 3, again: 3, terminal: 1 }), WAIT);
    await c.stop();
    expect(seen.terminal).toBe(1);
    expect(ctrl.queue.numRequeues({ namespace: '', name: 'terminal' })).toBe(0);
  });

  it('never reconciles one request on two workers at once, but runs different requests in parallel', async () => {
    let active = 0;
    let maxActive = 0;
    const activeByKey = new Map<string, number>();
    let overlapSameKey = false;
    let total = 0;
    const gates: Array<() => void> = [];
    const r: Reconciler = {
      async reconcile(_ctx, req) {
        const k = req.name;
        activeByKey.set(k, (activeByKey.get(k) ?? 0) + 1);
        if (activeByKey.get(k)! > 1) overlapSameKey = true;
        active++;
        maxActive = Math.max(maxActive, active);
        await new Promise<void>((resolve) => gates.push(resolve));
        active--;
        activeByKey.set(k, activeByKey.get(k)! - 1);
        total++;
      },
    };
    const ctrl = new Controller('parallel', r, { maxConcurrentReconciles: 4, rateLimiter: fast() });
    const src = new PushSource();
    const c = await running(ctrl, src);
    src.push({ namespace: 'n', name: 'x' }, { namespace: 'n', name: 'y' }, { namespace: 'n', name: 'z' });
    await vi.waitFor(() => expect(gates, 'three in flight').toHaveLength(3), WAIT);
    // x is re-added while it is being processed: it must wait for done.
    src.push({ namespace: 'n', name: 'x' }, { namespace: 'n', name: 'x' });
    expect(gates.length).toBe(3);
    // Release one gate per check until the fourth reconcile (x again, after its first run) is done.
    await vi.waitFor(
      () => {
        gates.shift()?.();
        expect(total).toBe(4);
      },
      { ...WAIT, interval: 1 },
    );
    await c.stop();
    expect(overlapSameKey).toBe(false);
    expect(maxActive).toBe(3);
    expect(total).toBe(4);
  });

  it('stops cleanly: start resolves after the signal and the in-flight reconcile finishes', async () => {
    let finished = false;
    let started = false;
    let release: () => void = () => {};
    const r: Reconciler = {
      async reconcile(ctx) {
        started = true;
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        expect(ctx.signal.aborted).toBe(true);
        finished = true;
      },
    };
    const ctrl = new Controller('stop', r, { rateLimiter: fast() });
    const src = new PushSource();
    const ac = new AbortController();
    ctrl.watch(src);
    const done = ctrl.start(ac.signal);
    await vi.waitFor(() => expect(src.queue, 'start').toBeDefined(), WAIT);
    src.push({ namespace: '', name: 'slow' });
    await vi.waitFor(() => expect(started, 'picked up').toBe(true), WAIT);
    ac.abort();
    release();
    await done;
    expect(finished).toBe(true);
    await expect(ctrl.start(new AbortController().signal)).rejects.toThrow(/already started/);
  });
});
