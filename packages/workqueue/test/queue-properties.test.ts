import { FakeClock } from '@kubeloop/core/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ItemExponentialFailureRateLimiter,
  newPriorityQueue,
  newRateLimitingQueue,
  type PriorityQueue,
  type RateLimitingQueue,
} from '../src/index.js';

/** Lets every settled promise's callbacks run (a macrotask turn drains the microtask queue). */
const flush = () => new Promise<void>((r) => setImmediate(r));

type Op =
  | { t: 'add'; k: number }
  | { t: 'addAfter'; k: number; ms: number }
  | { t: 'addRateLimited'; k: number }
  | { t: 'forget'; k: number }
  | { t: 'get'; w: number }
  | { t: 'tryGet'; w: number }
  | { t: 'done'; w: number }
  | { t: 'step'; ms: number }
  | { t: 'shutdown' };

const KEYS = 6;
const WORKERS = 3;
const BASE_MS = 10;
const MAX_MS = 200;

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ t: fc.constant('add' as const), k: fc.nat(KEYS - 1) }),
  fc.record({
    t: fc.constant('addAfter' as const),
    k: fc.nat(KEYS - 1),
    ms: fc.integer({ min: -5, max: 300 }),
  }),
  fc.record({ t: fc.constant('addRateLimited' as const), k: fc.nat(KEYS - 1) }),
  fc.record({ t: fc.constant('forget' as const), k: fc.nat(KEYS - 1) }),
  fc.record({ t: fc.constant('get' as const), w: fc.nat(WORKERS - 1) }),
  fc.record({ t: fc.constant('get' as const), w: fc.nat(WORKERS - 1) }),
  fc.record({ t: fc.constant('tryGet' as const), w: fc.nat(WORKERS - 1) }),
  fc.record({ t: fc.constant('done' as const), w: fc.nat(WORKERS - 1) }),
  fc.record({ t: fc.constant('done' as const), w: fc.nat(WORKERS - 1) }),
  fc.record({ t: fc.constant('step' as const), ms: fc.integer({ min: 0, max: 250 }) }),
);
/** Mostly churn, with a shutdown somewhere in about one sequence of three. */
const opsArb: fc.Arbitrary<Op[]> = fc.array(
  fc.oneof({ arbitrary: opArb, weight: 60 }, { arbitrary: fc.constant<Op>({ t: 'shutdown' }), weight: 2 }),
  { maxLength: 80 },
);

/**
 * Drives a queue with N simulated workers against a model of what must be handed out:
 * - `needed`: keys added (or whose delay has passed on the fake clock) and not handed out since;
 * - `dueAt`: earliest time a delayed add of the key becomes due.
 * Checks: no key is held by two workers; a key is handed out only if the model says it is needed (so
 * duplicates collapse and delays are never cut short); after stopping the churn, finishing all work and
 * advancing the clock, every needed key is handed out before shutdown.
 */
async function runScenario(kind: 'classic' | 'priority', ops: Op[], drainAtShutdown: boolean) {
  const clock = new FakeClock();
  const limiter = new ItemExponentialFailureRateLimiter<unknown>(BASE_MS, MAX_MS);
  const q: RateLimitingQueue<string> =
    kind === 'classic'
      ? newRateLimitingQueue<string>({ clock, rateLimiter: limiter })
      : newPriorityQueue<string>({ clock, rateLimiter: limiter });
  const needed = new Set<string>();
  const dueAt = new Map<string, number>();
  const failures = new Map<string, number>();
  const held: (string | undefined)[] = new Array(WORKERS).fill(undefined);
  const asking: boolean[] = new Array(WORKERS).fill(false);
  const errors: string[] = [];
  let isShut = false;

  const receive = (w: number, item: string) => {
    if (kind === 'priority' && isShut) errors.push(`priority queue handed out ${item} after shutDown`);
    if (held.some((h) => h === item)) errors.push(`key ${item} handed to worker ${w} while held by another`);
    if (!needed.has(item)) errors.push(`key ${item} handed out without a pending add (dup or early delay)`);
    needed.delete(item);
    held[w] = item;
  };
  const ask = (w: number) => {
    if (asking[w] || held[w] !== undefined) return;
    asking[w] = true;
    void q.get().then((r) => {
      asking[w] = false;
      if (!r.shutdown) receive(w, r.item);
    });
  };
  // The classic queue keeps delayed adds apart (a heap) and turns each into a plain add when due; the
  // priority queue keeps one entry per key, merging a delayed and an immediate add into one ready entry.
  const markAdd = (k: string, delay: number) => {
    if (isShut) return; // adds after shutDown are ignored
    if (delay > 0) {
      if (kind === 'priority' && needed.has(k)) return;
      const at = clock.now() + delay;
      const prev = dueAt.get(k);
      if (prev === undefined || at < prev) dueAt.set(k, at);
    } else {
      needed.add(k);
      if (kind === 'priority') dueAt.delete(k);
    }
  };
  const step = (ms: number) => {
    const target = clock.now() + ms;
    for (const [k, at] of dueAt) {
      if (at <= target) {
        needed.add(k);
        dueAt.delete(k);
      }
    }
    clock.step(ms);
  };

  for (const op of ops) {
    switch (op.t) {
      case 'add':
        markAdd(`k${op.k}`, 0);
        q.add(`k${op.k}`);
        break;
      case 'addAfter':
        markAdd(`k${op.k}`, op.ms);
        q.addAfter(`k${op.k}`, op.ms);
        break;
      case 'addRateLimited': {
        const k = `k${op.k}`;
        // after shutDown the classic queue still asks the limiter (client-go); the priority queue ignores the add
        if (isShut && kind === 'priority') {
          q.addRateLimited(k);
          expect(q.numRequeues(k)).toBe(failures.get(k) ?? 0);
          break;
        }
        const n = failures.get(k) ?? 0;
        failures.set(k, n + 1);
        markAdd(k, Math.min(MAX_MS, BASE_MS * 2 ** n));
        q.addRateLimited(k);
        expect(q.numRequeues(k)).toBe(n + 1);
        break;
      }
      case 'forget':
        failures.delete(`k${op.k}`);
        q.forget(`k${op.k}`);
        expect(q.numRequeues(`k${op.k}`)).toBe(0);
        break;
      case 'get':
        ask(op.w);
        break;
      case 'tryGet': {
        // the synchronous path a controller worker takes when an item is ready
        if (asking[op.w] || held[op.w] !== undefined) break;
        const item =
          kind === 'priority' ? (q as PriorityQueue<string>).tryGetWithPriority()?.item : q.tryGet();
        if (item !== undefined) receive(op.w, item);
        break;
      }
      case 'done': {
        const item = held[op.w];
        if (item !== undefined) {
          held[op.w] = undefined;
          q.done(item);
        }
        break;
      }
      case 'step':
        step(op.ms);
        break;
      case 'shutdown':
        // both drop delayed items; the classic queue still hands out what is queued, the priority queue not
        isShut = true;
        dueAt.clear();
        if (kind === 'priority') needed.clear();
        q.shutDown();
        break;
    }
    await flush();
    // Exactly the keys the model says are pending are queued: nothing early, nothing late, nothing twice.
    // (The classic queue's len() leaves out keys whose worker is still busy; the priority queue counts them.)
    const expectedLen =
      kind === 'priority' ? needed.size : [...needed].filter((k) => !held.includes(k)).length;
    if (q.len() !== expectedLen) errors.push(`len ${q.len()} but model expects ${expectedLen} at ${op.t}`);
    if (errors.length > 0) break;
  }

  // Stop the churn: finish all work, let every delay pass, keep all workers asking until idle.
  for (let round = 0; round < 10 * KEYS + 10 && errors.length === 0; round++) {
    // after shutDown a worker whose get resolved `shutdown` asks again: it must get shutdown again
    for (let w = 0; w < WORKERS; w++) {
      const item = held[w];
      if (item !== undefined) {
        held[w] = undefined;
        q.done(item);
        await flush(); // a waiting worker may receive the key at once: let the model see it first
      }
    }
    step(MAX_MS + 300);
    for (let w = 0; w < WORKERS; w++) ask(w);
    await flush();
    if (needed.size === 0 && dueAt.size === 0 && held.every((h) => h === undefined)) break;
  }
  expect(errors).toEqual([]);
  expect([...needed]).toEqual([]);
  expect([...dueAt]).toEqual([]);
  q.shutDown();
  await flush();
  // every waiting get has been answered with shutdown
  expect(asking.every((a) => !a)).toBe(true);
  if (drainAtShutdown) await q.shutDownWithDrain();
  const sizes = (q as unknown as { debugSizes(): Record<string, number> }).debugSizes();
  expect(sizes.processing).toBe(0);
  expect(sizes.waiters).toBe(0);
}

describe('queue properties (fast-check, simulated workers on a fake clock)', () => {
  it('rate-limiting queue: no key held twice, nothing lost, dedup, delays, shutdown', async () => {
    await fc.assert(
      fc.asyncProperty(opsArb, (ops) => runScenario('classic', ops, true)),
      { numRuns: 500 },
    );
  }, 60_000);

  it('priority queue: no key held twice, nothing lost, dedup, delays, shutdown', async () => {
    await fc.assert(
      fc.asyncProperty(opsArb, (ops) => runScenario('priority', ops, false)),
      { numRuns: 500 },
    );
  }, 60_000);

  it('priority queue (strict order, fairnessWindow: Infinity): ready items come out by priority, FIFO within a priority', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(30), fc.integer({ min: -2, max: 2 })), { maxLength: 60 }),
        async (adds) => {
          const q = newPriorityQueue<string>({
            clock: new FakeClock(),
            fairnessWindow: Number.POSITIVE_INFINITY,
          });
          // model: per key, max priority; a raise moves the key to the end of its new level
          const model = new Map<string, { p: number; seq: number }>();
          let seq = 0;
          for (const [k, p] of adds) {
            const key = `k${k}`;
            q.add(key, { priority: p });
            const m = model.get(key);
            if (m === undefined) model.set(key, { p, seq: seq++ });
            else if (p > m.p) model.set(key, { p, seq: seq++ });
          }
          const expected = [...model.entries()]
            .sort((a, b) => b[1].p - a[1].p || a[1].seq - b[1].seq)
            .map(([k, m]) => [k, m.p]);
          const got: [string, number][] = [];
          while (q.len() > 0) {
            const r = await q.getWithPriority();
            if (r.shutdown) break;
            got.push([r.item, r.priority]);
            q.done(r.item);
          }
          expect(got).toEqual(expected);
        },
      ),
      { numRuns: 200 },
    );
  }, 60_000);

  it('classic queue keeps handing out queued items after shutDown, then reports shutdown', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.nat(1000), { maxLength: 40 }), async (keys) => {
        const q = newRateLimitingQueue<number>({ clock: new FakeClock() });
        for (const k of keys) q.add(k);
        q.shutDown();
        q.add(-1);
        const got: number[] = [];
        for (;;) {
          const r = await q.get();
          if (r.shutdown) break;
          got.push(r.item);
          q.done(r.item);
        }
        expect(got).toEqual(keys);
      }),
      { numRuns: 100 },
    );
  }, 60_000);
});
