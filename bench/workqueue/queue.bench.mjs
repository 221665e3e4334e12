// @kubeloop/workqueue against a bare Map + array FIFO: the same keys added, handed out and finished.
import { newPriorityQueue, newQueue, newRateLimitingQueue } from '@kubeloop/workqueue';

const BATCH = 1000;
/** Rounds of BATCH keys per measured call: ~1 ms per call, so reading the clock costs < 1 %. */
const ROUNDS = 10;
const keys = Array.from({ length: BATCH }, (_, i) => `namespace-${i % 17}/object-${i}`);

/**
 * The floor: a Map for dedup plus an array FIFO (head/tail indices, slots reused once it empties); no
 * processing set, no waiting, no promises.
 */
class BareFifo {
  map = new Map();
  arr = [];
  head = 0;
  tail = 0;
  add(k) {
    if (this.map.has(k)) return;
    this.map.set(k, true);
    this.arr[this.tail++] = k;
  }
  get() {
    const k = this.arr[this.head++];
    if (this.head === this.tail) this.head = this.tail = 0;
    this.map.delete(k);
    return k;
  }
}

/** Fails the run if a call did not hand out every key exactly once (so a broken queue cannot look fast). */
function check(impl, got) {
  if (got !== BATCH) throw new Error(`${impl}: handed out ${got} keys in a call, expected ${BATCH}`);
}

function bareTask(scenario, dup) {
  let q;
  return {
    scenario,
    impl: 'bare-map-array-fifo',
    opsPerCall: BATCH * ROUNDS,
    async: false,
    beforeAll: () => {
      q = new BareFifo();
    },
    fn: () => {
      for (let round = 0; round < ROUNDS; round++) {
        for (let d = 0; d < dup; d++) for (let i = 0; i < BATCH; i++) q.add(keys[i]);
        let got = 0;
        while (q.head !== q.tail) {
          q.get();
          got++;
        }
        check('bare', got);
      }
    },
  };
}

/**
 * The floor of any queue whose `get` returns a promise: the bare FIFO, plus one awaited, already resolved
 * promise of a `{ item, shutdown }` result per item — what `await q.get()` costs a worker before any bookkeeping.
 */
function bareAwaitTask(scenario, dup) {
  let q;
  return {
    scenario,
    impl: 'bare-map-array-fifo-await',
    opsPerCall: BATCH * ROUNDS,
    async: true,
    beforeAll: () => {
      q = new BareFifo();
    },
    fn: async () => {
      for (let round = 0; round < ROUNDS; round++) {
        for (let d = 0; d < dup; d++) for (let i = 0; i < BATCH; i++) q.add(keys[i]);
        let got = 0;
        while (q.head !== q.tail) {
          const r = await Promise.resolve({ item: q.get(), shutdown: false });
          if (r.item !== undefined) got++;
        }
        check('bare-await', got);
      }
    },
  };
}

/** `make` builds a fresh queue for each phase (warm-up and run); it is shut down after each phase. */
function queueTask(scenario, impl, make, dup, forget) {
  let q;
  return {
    scenario,
    impl,
    opsPerCall: BATCH * ROUNDS,
    async: true,
    beforeAll: () => {
      q = make();
    },
    fn: async () => {
      for (let round = 0; round < ROUNDS; round++) {
        for (let d = 0; d < dup; d++) for (let i = 0; i < BATCH; i++) q.add(keys[i]);
        let got = 0;
        while (q.len() > 0) {
          const r = await q.get();
          if (forget) q.forget(r.item);
          q.done(r.item);
          got++;
        }
        check(impl, got);
      }
    },
    afterAll: () => q.shutDown(),
  };
}

/**
 * The loop of a controller worker (`@kubeloop/builder`'s `Controller`): take a ready item synchronously
 * (`tryGet()`, or `tryGetWithPriority()` on the priority queue, the builder's default) and await `get()` only
 * when nothing is ready. With a backlog — every key here is ready — no item costs a promise; the await path
 * is what `kubeloop-queue` and the waiting-workers scenario measure.
 */
function workerTask(scenario, impl, make, dup, forget, withPriority) {
  let q;
  return {
    scenario,
    impl,
    opsPerCall: BATCH * ROUNDS,
    async: true,
    beforeAll: () => {
      q = make();
    },
    fn: async () => {
      for (let round = 0; round < ROUNDS; round++) {
        for (let d = 0; d < dup; d++) for (let i = 0; i < BATCH; i++) q.add(keys[i]);
        let got = 0;
        while (got < BATCH) {
          let item = withPriority ? q.tryGetWithPriority()?.item : q.tryGet();
          if (item === undefined) item = (await q.get()).item; // idle: wait (not reached with a backlog)
          if (forget) q.forget(item);
          q.done(item);
          got++;
        }
        check(impl, got);
        if (q.len() !== 0) throw new Error(`${impl}: ${q.len()} keys left after a round`);
      }
    },
    afterAll: () => q.shutDown(),
  };
}

/**
 * Four workers already waiting in `get()` while a producer adds the keys: every item goes through the
 * waiter hand-off path, as in a controller whose workers are idle when events arrive.
 */
function workersTask(impl, make, workers) {
  let q;
  return {
    scenario: `${workers} waiting workers: add+get+done`,
    impl,
    opsPerCall: BATCH * ROUNDS,
    async: true,
    beforeAll: () => {
      q = make();
    },
    fn: async () => {
      for (let round = 0; round < ROUNDS; round++) {
        let got = 0;
        let finish;
        const all = new Promise((resolve) => {
          finish = resolve;
        });
        const loop = async () => {
          for (;;) {
            const r = await q.get();
            q.done(r.item);
            if (++got === BATCH) {
              finish();
              return;
            }
            if (got > BATCH) return;
          }
        };
        const running = [];
        for (let w = 0; w < workers; w++) running.push(loop());
        for (let i = 0; i < BATCH; i++) q.add(keys[i]);
        await all;
        // wake the idle workers with throw-away keys so every loop ends before the next round
        for (let w = 1; w < workers; w++) q.add(`stop-${w}`);
        await Promise.all(running);
        check(impl, Math.min(got, BATCH));
      }
    },
    afterAll: () => q.shutDown(),
  };
}

export function tasks() {
  const out = [];
  for (const [scenario, dup] of [
    ['add+get+done', 1],
    ['add×3 (dedup)+get+done', 3],
  ]) {
    out.push(bareTask(scenario, dup));
    out.push(bareAwaitTask(scenario, dup));
    out.push(workerTask(scenario, 'kubeloop-queue-worker', () => newQueue(), dup, false, false));
    out.push(queueTask(scenario, 'kubeloop-queue', () => newQueue(), dup, false));
    out.push(
      workerTask(
        scenario,
        'kubeloop-rate-limiting-queue-worker',
        () => newRateLimitingQueue(),
        dup,
        true,
        false,
      ),
    );
    out.push(queueTask(scenario, 'kubeloop-rate-limiting-queue', () => newRateLimitingQueue(), dup, true));
    out.push(
      workerTask(scenario, 'kubeloop-priority-queue-worker', () => newPriorityQueue(), dup, true, true),
    );
    out.push(queueTask(scenario, 'kubeloop-priority-queue', () => newPriorityQueue(), dup, true));
  }
  out.push(workersTask('kubeloop-queue', () => newQueue(), 4));
  out.push(workersTask('kubeloop-priority-queue', () => newPriorityQueue(), 4));
  return out;
}

/**
 * Ratio of costs (kubeloop ns/op ÷ bare ns/op = bare ops/s ÷ kubeloop ops/s), computed per repetition from
 * runs that ran next to each other, then the median, so a busy phase of the machine cancels out.
 */
function pairedRatio(bare, r) {
  const n = Math.min(bare.opsPerSecRuns?.length ?? 0, r.opsPerSecRuns?.length ?? 0);
  const ratios = [];
  for (let i = 0; i < n; i++) ratios.push(bare.opsPerSecRuns[i] / r.opsPerSecRuns[i]);
  if (ratios.length === 0) ratios.push(bare.opsPerSec / r.opsPerSec);
  ratios.sort((a, b) => a - b);
  return Number((ratios[Math.floor((ratios.length - 1) / 2)] ?? Number.NaN).toFixed(2));
}

/**
 * Final lines: the cost of a controller worker's path (`tryGet` while items are ready) on the basic queue
 * relative to the bare FIFO, target ≤ 2 (was ≤ 3), and on the priority queue (the builder's
 * default, with `forget`); then, as context, `await get()` for every item, against the bare FIFO and against
 * the bare FIFO with one awaited promise per item.
 */
export function summary(results) {
  const pick = (impl, scenario) => results.find((r) => r.impl === impl && r.scenario === scenario);
  const ratios = {};
  for (const r of results) {
    const base = pick('bare-map-array-fifo', r.scenario);
    if (r.impl !== 'bare-map-array-fifo' && base) ratios[`${r.scenario} / ${r.impl}`] = pairedRatio(base, r);
  }
  const bare = pick('bare-map-array-fifo', 'add+get+done');
  const worker = pick('kubeloop-queue-worker', 'add+get+done');
  const kl = pick('kubeloop-queue', 'add+get+done');
  if (!bare || !worker || !kl) return [];
  const bareAwait = pick('bare-map-array-fifo-await', 'add+get+done');
  const pqWorker = pick('kubeloop-priority-queue-worker', 'add+get+done');
  const lines = [
    {
      scenario: 'add+get+done',
      impl: 'kubeloop-queue-worker vs bare-map-array-fifo',
      ratio: pairedRatio(bare, worker),
      target: 2,
      ratioOf: "a controller worker's loop (tryGet while items are ready) ÷ the bare FIFO",
      ratios,
    },
  ];
  if (pqWorker)
    lines.push({
      scenario: 'add+get+done',
      impl: 'kubeloop-priority-queue-worker vs bare-map-array-fifo',
      ratio: pairedRatio(bare, pqWorker),
      target: 2,
      ratioOf:
        "the builder's default queue in its worker's loop (tryGetWithPriority + forget + done) ÷ the bare FIFO",
    });
  lines.push({
    scenario: 'add+get+done',
    impl: 'kubeloop-queue vs bare-map-array-fifo',
    ratio: pairedRatio(bare, kl),
    ratioOf: 'await get() for every item ÷ the bare FIFO (context, no target)',
  });
  if (bareAwait)
    lines.push({
      scenario: 'add+get+done',
      impl: 'kubeloop-queue vs bare-map-array-fifo-await',
      ratio: pairedRatio(bareAwait, kl),
      ratioOf:
        'the queue (await get()) ÷ the bare FIFO with one awaited promise per item (context, no target)',
    });
  return lines;
}
