// The chaos suite: a controller over ConfigMaps under random traffic and a seeded fault schedule. The
// `ci` profile runs in `npm test`; `npm run test:chaos -- --seed N [--profile ci|short|long]` replays a seed or runs
// a longer profile.

import type { Logger } from '@kubeloop/builder';
import { newControllerManagedBy } from '@kubeloop/builder';
import { describe, expect, it } from 'vitest';
import { type ChaosOptions, chaosPassed, formatChaosReport, runChaos } from '../src/index.js';

/**
 * Profiles: `ci` (what `npm test` runs: 10 s of faults, about 25 of them, every few hundred ms), `short` (25 s
 * of faults, about a minute on a 2-core box) and `long` (10,000 objects, 10 minutes of faults); the last two by
 * `npm run test:chaos -- --profile short|long`.
 */
const PROFILES: Record<
  string,
  Pick<ChaosOptions, 'objects' | 'durationMs' | 'faultGapMs' | 'writesPerSecond' | 'settleMs'>
> = {
  ci: { objects: 150, durationMs: 10_000, faultGapMs: 400, writesPerSecond: 40, settleMs: 40_000 },
  short: { objects: 300, durationMs: 25_000, faultGapMs: 700, writesPerSecond: 40, settleMs: 40_000 },
  long: { objects: 10_000, durationMs: 600_000, faultGapMs: 1000, writesPerSecond: 100, settleMs: 40_000 },
};

const profileName = process.env.CHAOS_PROFILE ?? 'ci';
const profile = PROFILES[profileName];
const seed = process.env.CHAOS_SEED !== undefined ? Number(process.env.CHAOS_SEED) : undefined;
// CHAOS_SETTLE_MS lengthens the settle window, to see how long a failing run takes to recover.
if (profile && process.env.CHAOS_SETTLE_MS) profile.settleMs = Number(process.env.CHAOS_SETTLE_MS);

describe('chaos', () => {
  it(`${profileName} profile: no lost change, cache equals server once the reflector's backoff allows (≤ 40 s), no concurrent reconcile of a key, no unhandled rejection`, {
    timeout: (profile?.durationMs ?? 0) + 120_000,
  }, async () => {
    expect(profile, `unknown CHAOS_PROFILE ${profileName}`).toBeDefined();
    const report = await runChaos({
      ...profile,
      ...(seed !== undefined ? { seed } : {}),
      setup(env) {
        const client = env.manager.getClient();
        newControllerManagedBy(env.manager)
          .for(env.traffic.kind)
          .named('chaos-configmaps')
          .withOptions({ maxConcurrentReconciles: 4 })
          .complete(
            env.probe.wrap(env.traffic.kind, client, {
              async reconcile() {
                // A read-only reconciler: what is checked is what it was shown (recorded by the probe).
                return undefined;
              },
            }),
          );
      },
      log: (line) => console.log(line),
      // CHAOS_DEBUG=1 prints the manager's warnings and errors (why a run failed).
      ...(process.env.CHAOS_DEBUG ? { logger: debugLogger() } : {}),
    });
    console.log(formatChaosReport(report));
    expect(chaosPassed(report), formatChaosReport(report)).toBe(true);
    expect(report.lostChanges).toBe(0);
    expect(report.divergentCacheEntries).toBe(0);
    expect(report.concurrentReconciles).toBe(0);
    expect(report.unhandledRejections).toBe(0);
    // The run did exercise the faults and the controller.
    expect(Object.keys(report.faultsApplied).length).toBeGreaterThan(3);
    expect(report.reconciles).toBeGreaterThan(report.objects);
  });
});

function debugLogger(bound: Record<string, unknown> = {}): Logger {
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => {
    if (level === 'warn' || level === 'error' || process.env.CHAOS_DEBUG === 'all')
      console.log(`${new Date().toISOString()} ${level} ${msg} ${JSON.stringify({ ...bound, ...fields })}`);
  };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (b) => debugLogger({ ...bound, ...b }),
  };
}
