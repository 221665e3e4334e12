import { Lease } from '@kubeloop/client/kinds';
import { describe, expect, it, vi } from 'vitest';
import { runSingleton } from '../src/leader-singleton.js';
import { useEnvtest } from './support.js';

const t = useEnvtest();

describe('example: leader-elected singleton', () => {
  it('runs the work on one replica only; when the leader stops, the standby takes over at once', async () => {
    const ns = await t.namespace();
    const leading = new Set<string>();
    let maxLeaders = 0;
    const replica = (identity: string) => {
      const stop = new AbortController();
      const done = runSingleton(
        {
          client: t.client(),
          namespace: ns,
          leaseName: 'singleton',
          identity,
          // The test never waits for the Lease to expire (a stop releases it), so the lease and renew deadline
          // can be long: with a 2 s renew deadline the leader lost the Lease on a loaded real kube-apiserver
          // (renews slower than 2 s) before the test had checked it led.
          leaseDurationMs: 15_000,
          renewDeadlineMs: 10_000,
          retryPeriodMs: 200,
          work: async (signal) => {
            leading.add(identity);
            maxLeaders = Math.max(maxLeaders, leading.size);
            // The signal may have aborted before work started (lost the lease at once): a listener added then
            // would never fire, so check first.
            if (!signal.aborted)
              await new Promise<void>((resolve) =>
                signal.addEventListener('abort', () => resolve(), { once: true }),
              );
            leading.delete(identity);
          },
        },
        stop.signal,
      );
      return { stop: () => stop.abort(), done };
    };
    const a = replica('a');
    await vi.waitFor(() => expect([...leading]).toEqual(['a']));
    const b = replica('b');
    await vi.waitFor(async () =>
      expect((await t.client().get(Lease, { namespace: ns, name: 'singleton' })).spec?.holderIdentity).toBe(
        'a',
      ),
    );
    expect([...leading]).toEqual(['a']);

    a.stop(); // releaseOnCancel: the holder is cleared, b need not wait for the lease to expire
    await a.done;
    await vi.waitFor(() => expect([...leading]).toEqual(['b']));
    expect(maxLeaders).toBe(1);
    b.stop();
    await b.done;
  });
});
