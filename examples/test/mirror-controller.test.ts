import { ConfigMap } from '@kubeloop/client';
import { chaosPassed, formatChaosReport, runChaos } from '@kubeloop/testing';
import { describe, expect, it } from 'vitest';
import { addMirrorController, mirrorNameOf } from '../src/mirror-controller.js';

// The chaos harness makes its faults on an envtest server it starts itself (watch drops, 410s, 5xx, throttling), so
// the test never meets the cluster of USE_EXISTING_CLUSTER: skipped there like the other fault-injection tests (a
// real control plane has its own harness target, `npm run test:chaos -- --target real`).
const realCluster = process.env.USE_EXISTING_CLUSTER === 'true';

describe.skipIf(realCluster)('example: a controller under the chaos harness', () => {
  it('mirrors every ConfigMap despite watch drops, 410s, 5xx and throttling: no lost change, mirrors equal sources', async () => {
    const report = await runChaos({
      seed: 14,
      objects: 30,
      durationMs: 3_000,
      faultGapMs: 300,
      writesPerSecond: 30,
      settleMs: 20_000,
      faults: ['watchDrop', 'expireWatch', 'serverError', 'throttle', 'brokenFrame'],
      setup(env) {
        const prefix = env.traffic.namePrefix ?? 'chaos-';
        addMirrorController(env.manager, prefix, (r) =>
          env.probe.wrap(env.traffic.kind, env.manager.getClient(), r),
        );
      },
      // After the faults stop and the cache has settled: every source has an equal mirror, no orphan mirror.
      async invariant(env) {
        const deadline = Date.now() + 15_000;
        let problems: string[] = [];
        do {
          const all = (await env.client.list(ConfigMap, { namespace: env.namespace })).items;
          const byName = new Map(all.map((cm) => [cm.metadata?.name ?? '', cm]));
          problems = [];
          for (const [name, cm] of byName) {
            if (name.startsWith(env.traffic.namePrefix ?? 'chaos-')) {
              const m = byName.get(mirrorNameOf(name));
              if (JSON.stringify(m?.data) !== JSON.stringify(cm.data ?? {}))
                problems.push(`${name}: mirror differs`);
            } else if (name.startsWith('mirror-') && !byName.has(name.slice('mirror-'.length))) {
              problems.push(`${name}: orphan mirror`);
            }
          }
          if (problems.length === 0) return [];
          await new Promise((resolve) => setTimeout(resolve, 200));
        } while (Date.now() < deadline);
        return problems;
      },
    });
    expect(chaosPassed(report), formatChaosReport(report)).toBe(true);
    expect(report.reconciles).toBeGreaterThan(report.objects);
  });
});
