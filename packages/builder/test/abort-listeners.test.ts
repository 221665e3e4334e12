import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigMap, Namespace, newClient, Secret, Service } from '@kubeloop/client';
import { ServiceAccount } from '@kubeloop/client/kinds';
import { describe, expect, it, vi } from 'vitest';
import { cacheSyncCheck, newControllerManagedBy, newManager, newMetricsRegistry } from '../src/index.js';
import { newSharding } from '../src/sharding/index.js';
import { useEnvtest } from './support/config.js';

// No builder component adds an 'abort' listener of its own to a long-lived
// signal (the manager's stop signal, a runnable group's signal) per controller, worker, source or
// request; they subscribe through the client's per-signal fan-out `onAbort`. Node prints a
// MaxListenersExceededWarning past 10 listeners on one AbortSignal.

const srcDir = fileURLToPath(new URL('../src', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('abort listeners on long-lived signals', () => {
  it("no builder src file calls addEventListener('abort') itself: every subscription goes through onAbort", () => {
    const offenders = sourceFiles(srcDir)
      .filter((f) => /addEventListener\(\s*['"]abort['"]/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(srcDir, f));
    expect(offenders).toEqual([]);
  });

  describe('a busy manager (envtest)', () => {
    const env = useEnvtest('abort-listeners-test');

    it('12 controllers × 4 workers, leader election, sharding, probes, metrics and events emit no MaxListenersExceededWarning', async () => {
      const warnings: Error[] = [];
      const onWarning = (w: Error) => {
        if (w.name === 'MaxListenersExceededWarning') {
          warnings.push(w);
          console.log(w.stack);
        }
      };
      process.on('warning', onWarning);
      const api = newClient(env.config);
      const ns = 'abort-listeners';
      try {
        await api.create(Namespace, { metadata: { name: ns } });
        for (let i = 0; i < 12; i++)
          await api.create(ConfigMap, { metadata: { namespace: ns, name: `cm-${i}` } });
        const mgr = newManager(env.config, {
          gracefulShutdownTimeoutMs: 20_000,
          cache: { defaultNamespaces: [ns] },
          leaderElection: {
            id: 'abort-listeners',
            namespace: ns,
            releaseOnCancel: true,
            // The manager's own elector (its abort listeners are counted), on the real clock, with a lease and
            // renew deadline no starvation of tens of seconds outlasts: a loaded machine (a shuffled soak at load
            // 39) let a 3 s renew deadline pass, so the manager stopped with LeaderElectionLostError before the
            // count. Nothing waits for an expiry (the lease is released on cancel), so the end is not slower.
            leaseDurationMs: 60_000,
            renewDeadlineMs: 45_000,
            retryPeriodMs: 200,
          },
          metrics: { registry: newMetricsRegistry(), bindAddress: '127.0.0.1:0' },
          health: { bindAddress: '127.0.0.1:0' },
        });
        mgr.addReadyzCheck('sync', cacheSyncCheck(mgr));
        const recorder = mgr.getEventRecorderFor('abort-listeners');
        const seen = new Set<string>();
        const kinds = [ConfigMap, Secret, Service, ServiceAccount];
        for (let c = 0; c < 12; c++) {
          const b = newControllerManagedBy(mgr)
            .named(`c${c}`)
            .for(kinds[c % kinds.length] ?? ConfigMap)
            .withOptions({ maxConcurrentReconciles: 4, reconciliationTimeoutMs: 60_000 });
          b.complete({
            async reconcile(_ctx, req) {
              seen.add(`c${c}/${req.name}`);
              if (req.name.startsWith('cm-')) {
                const cm = await mgr.getClient().get(ConfigMap, req);
                recorder.event(cm, 'Normal', 'Seen', 'Reconcile', `reconciled by c${c}`);
              }
            },
          });
        }
        const sharding = newSharding(mgr, {
          name: 'abort-listeners',
          namespace: ns,
          identity: 'solo',
          leaseDurationMs: 4000,
          renewDeadlineMs: 3000,
          retryPeriodMs: 200,
        });
        const sharded = new Set<string>();
        sharding.complete(
          newControllerManagedBy(mgr).named('sharded').withOptions({ maxConcurrentReconciles: 8 }),
          ConfigMap,
          {
            async reconcile(_ctx, req) {
              sharded.add(req.name);
            },
          },
        );
        const stop = new AbortController();
        const done = mgr.start(stop.signal);
        try {
          await vi.waitFor(
            () => {
              expect(seen.size).toBeGreaterThanOrEqual(12 * 3);
              expect(sharded.size).toBeGreaterThanOrEqual(12);
            },
            { timeout: 20_000 },
          );
          const probes = mgr.healthProbeServerAddress();
          for (let i = 0; i < 12; i++) await fetch(`http://${probes}/readyz`).then((r) => r.text());
          const metrics = mgr.metricsServerAddress();
          for (let i = 0; i < 12; i++) await fetch(`http://${metrics}/metrics`).then((r) => r.text());
        } finally {
          stop.abort();
          await done;
        }
        // Warnings are emitted on the next tick.
        await new Promise<void>((resolve) => setImmediate(resolve));
        expect(warnings.map((w) => w.message)).toEqual([]);
      } finally {
        process.off('warning', onWarning);
        await api.close();
      }
    }, 60_000);
  });
});
