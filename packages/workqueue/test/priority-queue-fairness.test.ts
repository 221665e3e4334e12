import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_FAIRNESS_WINDOW,
  InvalidArgumentError,
  LOW_PRIORITY,
  newPriorityQueue,
} from '../src/index.js';

// C41: keys that requeue themselves at a high priority must not starve lower-priority keys (an initial list).
// The queue hands at least one handout in every `fairnessWindow` to the item ready the longest; an item is
// handed out within fairnessWindow × (N + 1) handouts of becoming ready, N = items ready at that moment.

/** One worker that reconciles synchronously: hot keys requeue themselves (added while processing, then done). */
function runWorker(
  q: ReturnType<typeof newPriorityQueue<string>>,
  handouts: string[],
  hotPriority: number,
  steps: number,
): void {
  for (let i = 0; i < steps; i++) {
    const r = q.tryGetWithPriority();
    if (r === undefined) return;
    handouts.push(r.item);
    if (r.item.startsWith('hot')) q.add(r.item, { priority: hotPriority });
    q.done(r.item);
  }
}

describe('PriorityQueue fair share (C41)', () => {
  it('40 low-priority keys behind 3 keys that requeue themselves forever: every one is handed out within the bound', () => {
    const q = newPriorityQueue<string>();
    for (let i = 0; i < 40; i++) q.add(`initial-${i}`, { priority: LOW_PRIORITY });
    const n = q.len();
    for (const h of ['hot-a', 'hot-b', 'hot-c']) q.add(h);
    const handouts: string[] = [];
    runWorker(q, handouts, 0, 10_000);
    const last = Math.max(...Array.from({ length: 40 }, (_, i) => handouts.indexOf(`initial-${i}`)));
    expect(last).toBeGreaterThanOrEqual(0);
    expect(last + 1).toBeLessThanOrEqual(DEFAULT_FAIRNESS_WINDOW * (n + 3 + 1));
    // Fair, not flat: the hot keys still get most handouts while the backlog drains.
    const hotBefore = handouts.slice(0, last + 1).filter((k) => k.startsWith('hot')).length;
    expect(hotBefore).toBeGreaterThan(last / 2);
    q.shutDown();
  });

  it('fairnessWindow: Infinity is controller-runtime strict order: the same stream starves the low keys', () => {
    const q = newPriorityQueue<string>({ fairnessWindow: Number.POSITIVE_INFINITY });
    for (let i = 0; i < 40; i++) q.add(`initial-${i}`, { priority: LOW_PRIORITY });
    for (const h of ['hot-a', 'hot-b', 'hot-c']) q.add(h);
    const handouts: string[] = [];
    runWorker(q, handouts, 0, 10_000);
    expect(handouts.filter((k) => k.startsWith('initial'))).toEqual([]);
    q.shutDown();
  });

  it('strict priority order holds while nothing lower waits, and within a priority items stay FIFO', () => {
    const q = newPriorityQueue<string>({ fairnessWindow: 2 });
    for (const k of ['a', 'b', 'c']) q.add(k, { priority: 5 });
    expect([q.tryGet(), q.tryGet(), q.tryGet()]).toEqual(['a', 'b', 'c']);
    q.add('low', { priority: -1 });
    q.add('x', { priority: 5 });
    q.add('y', { priority: 5 });
    // window 2: one handout from the top, then the oldest ready ('low' became ready before 'y').
    expect([q.tryGet(), q.tryGet(), q.tryGet()]).toEqual(['x', 'low', 'y']);
    q.shutDown();
  });

  it('refuses a fairnessWindow that is not an integer >= 2 or Infinity', () => {
    for (const w of [0, 1, 2.5, -3, Number.NaN])
      expect(() => newPriorityQueue({ fairnessWindow: w })).toThrow(InvalidArgumentError);
    expect(() => newPriorityQueue({ fairnessWindow: Number.POSITIVE_INFINITY })).not.toThrow();
  });

  type Op = { t: 'add'; priority: number } | { t: 'work'; n: number } | { t: 'raise'; priority: number };

  it('property: over random arrivals, priorities and self-requeueing hot keys, every key is handed out within fairnessWindow × (N + 1) handouts of becoming ready', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 10 }),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: -50, max: 300 }),
        fc.array(
          fc.oneof(
            fc.record({ t: fc.constant('add' as const), priority: fc.integer({ min: -200, max: 200 }) }),
            fc.record({ t: fc.constant('work' as const), n: fc.integer({ min: 1, max: 20 }) }),
            fc.record({ t: fc.constant('raise' as const), priority: fc.integer({ min: -200, max: 400 }) }),
          ),
          { maxLength: 200 },
        ),
        (window, hotCount, hotPriority, ops: Op[]) => {
          const q = newPriorityQueue<string>({ fairnessWindow: window });
          let handouts = 0;
          /** key → [handouts when it became ready, the bound] while it waits. */
          const waiting = new Map<string, { since: number; bound: number; priority: number }>();
          const becomeReady = (key: string, priority: number) => {
            const prev = waiting.get(key);
            if (prev && priority <= prev.priority) return; // dedup: no change, the old bound stands
            // A new key, or a raise (the item moves to the end of its new level, ready anew).
            const n = q.len();
            q.add(key, { priority });
            waiting.set(key, { since: handouts, bound: window * (n + 1), priority });
          };
          for (let h = 0; h < hotCount; h++) q.add(`hot-${h}`, { priority: hotPriority });
          let next = 0;
          const work = (steps: number) => {
            for (let i = 0; i < steps; i++) {
              const r = q.tryGetWithPriority();
              if (r === undefined) return;
              handouts++;
              const w = waiting.get(r.item);
              if (w) {
                expect(handouts - w.since).toBeLessThanOrEqual(w.bound);
                waiting.delete(r.item);
              }
              if (r.item.startsWith('hot')) q.add(r.item, { priority: hotPriority });
              q.done(r.item);
            }
          };
          for (const op of ops) {
            if (op.t === 'add') becomeReady(`k${next++}`, op.priority);
            else if (op.t === 'raise') {
              const keys = [...waiting.keys()];
              if (keys.length > 0)
                becomeReady(keys[Math.abs(op.priority) % keys.length] as string, op.priority);
            } else work(op.n);
          }
          // Then only the hot stream arrives: every waiting key still gets out within its bound.
          const bound = Math.max(0, ...[...waiting.values()].map((w) => w.since + w.bound - handouts));
          work(bound + 1);
          expect([...waiting.keys()]).toEqual([]);
          q.shutDown();
        },
      ),
      { numRuns: 300 },
    );
  });
});
