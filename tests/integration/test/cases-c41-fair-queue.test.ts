import { discardLogger, newControllerManagedBy, newManager } from '@kubeloop/builder';
import { ConfigMap } from '@kubeloop/client';
import { DEFAULT_FAIRNESS_WINDOW, ItemExponentialFailureRateLimiter } from '@kubeloop/workqueue';
import { describe, expect, it, vi } from 'vitest';
import { testConfig, uniqueName, useLiveCluster, withNamespace } from './support.js';

// C41: with the default (priority) queue, keys of the initial list (LOW_PRIORITY) must not starve behind a few
// keys that requeue themselves at once forever (controller-runtime issue 3496 is the same class). The queue's
// fair share bounds the wait in handouts: fairnessWindow × (N + 1), N = requests ready when it was queued.

const INITIAL = 40;
const HOT = 3;
/** Handouts after which the test stops waiting (far past the bound; on the old queue the backlog never moves). */
const GIVE_UP = 3000;

async function run(variant: { workers: number; errors: boolean }) {
  const live = current;
  const api = live.client();
  const ns = uniqueName('c41');
  live.cleanups.push(await withNamespace(api, ns));
  for (let i = 0; i < INITIAL; i++)
    await api.create(ConfigMap, { metadata: { namespace: ns, name: `init-${i}` } });

  let releaseInitial!: () => void;
  const hotCreated = new Promise<void>((r) => {
    releaseInitial = r;
  });
  let firstInitial!: () => void;
  const initialStarted = new Promise<void>((r) => {
    firstInitial = r;
  });
  let handouts = 0;
  const initialDone = new Set<string>();
  let handoutsAtLastInitial = -1;
  let giveUp!: () => void;
  const finished = new Promise<void>((r) => {
    giveUp = r;
  });
  const mgr = newManager(testConfig(), {
    logger: discardLogger,
    cache: { defaultNamespaces: [ns] },
    metrics: { bindAddress: '0' },
  });
  const ctrl = newControllerManagedBy(mgr)
    .for(ConfigMap)
    .withOptions({
      maxConcurrentReconciles: variant.workers,
      // Errors retried after 1 ms every time: a hot key that fails is as hot as one that requeues.
      ...(variant.errors ? { rateLimiter: new ItemExponentialFailureRateLimiter(1, 1) } : {}),
    })
    .complete({
      async reconcile(_ctx, req) {
        handouts++;
        if (handouts >= GIVE_UP) giveUp();
        if (req.name.startsWith('hot')) {
          // A reconcile that takes a few ms, so that another hot key is always ready when a worker frees up.
          await new Promise((r) => setTimeout(r, 3));
          if (variant.errors) throw new Error('hot key fails again');
          return { requeueAfterMs: 1 };
        }
        // The first initial reconciles wait until the hot keys are queued, so the race starts with a full
        // backlog and the hot keys come as live changes (priority 0), not in the initial list.
        firstInitial();
        await hotCreated;
        initialDone.add(req.name);
        if (initialDone.size === INITIAL) {
          handoutsAtLastInitial = handouts;
          giveUp();
        }
        return undefined;
      },
    });
  const ac = new AbortController();
  const running = mgr.start(ac.signal);
  live.cleanups.push(async () => {
    ac.abort();
    await running;
  });
  await initialStarted;
  for (let i = 0; i < HOT; i++)
    await api.create(ConfigMap, { metadata: { namespace: ns, name: `hot-${i}` } });
  // The hot keys' create events are queued (as live changes) before the backlog moves on: every worker holds
  // an initial key, the rest of the backlog and the hot keys are ready.
  const queued = INITIAL - Math.min(variant.workers, INITIAL) + HOT;
  await vi.waitFor(() => expect((ctrl.queue as unknown as { len(): number }).len()).toBe(queued), {
    timeout: 20_000,
  });
  releaseInitial();
  await finished;
  expect(initialDone.size).toBe(INITIAL);
  // The documented bound: every request ready behind at most INITIAL + HOT others.
  expect(handoutsAtLastInitial).toBeLessThanOrEqual(DEFAULT_FAIRNESS_WINDOW * (INITIAL + HOT + 1));
}

let current: ReturnType<typeof useLiveCluster>;

describe('C41: the initial list is not starved by keys that requeue themselves', () => {
  current = useLiveCluster();

  it('C41: 1 worker, 3 keys requeueing after 1 ms forever: all 40 initial keys are reconciled within the bound', async () => {
    await run({ workers: 1, errors: false });
  });

  it('C41: 1 worker, 3 keys failing forever (retried after 1 ms): all 40 initial keys are reconciled within the bound', async () => {
    await run({ workers: 1, errors: true });
  });

  it('C41: 8 workers, 3 keys requeueing forever: all 40 initial keys are reconciled within the bound', async () => {
    await run({ workers: 8, errors: false });
  });
});
