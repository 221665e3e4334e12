/**
 * Ground truth: replays `../shared/wire/battery.json` in order against a fresh envtest server and compares the
 * shape of every response with the golden recorded from kube-apiserver v1.32 (one case per golden file).
 * Relaxations and deliberate differences are listed below and explained in the package README.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBattery, type StepResult } from '../support/battery.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import {
  compareExchange,
  goldenNames,
  loadBattery,
  loadGolden,
  type StepCompare,
} from '../support/golden.js';
import { formatDiffs } from '../support/shape.js';

const steps = loadBattery();
const stepByName = new Map(steps.map((s) => [s.name, s]));
const names = goldenNames();

/**
 * envtest serves a subset of kube-apiserver's built-in API (README "Ground truth"): discovery documents and the
 * OpenAPI index may list fewer groups, versions and resources, but every entry envtest does list must have the
 * golden's shape, and it may list nothing the real server does not.
 */
const SUBSET: Record<string, StepCompare> = {
  'discovery-apis': { subsetAt: ['$.groups', '$.groups[].versions'] },
  'discovery-api-v1': { subsetAt: ['$.resources'] },
  'discovery-apps-v1': { subsetAt: ['$.resources'] },
  'discovery-api-aggregated': { subsetAt: ['$.items[].versions[].resources'] },
  'discovery-apis-aggregated': {
    subsetAt: ['$.items', '$.items[].versions', '$.items[].versions[].resources'],
  },
  'discovery-apis-aggregated-with-crd': {
    subsetAt: ['$.items', '$.items[].versions', '$.items[].versions[].resources'],
  },
  'openapi-v3-index': { subsetAt: ['$.paths'] },
};

/** Golden files envtest deliberately does not match; each reason is repeated in the README. */
const DELIBERATE: Record<string, string> = {};

/** The HTTP status a step without a golden file must answer, read from its name (`…-422`). */
function statusFromName(name: string): number | undefined {
  const m = /-(\d{3})$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

describe('golden battery replay (kube-apiserver v1.32 goldens)', { timeout: 30_000 }, () => {
  let cluster: TestCluster | undefined;
  let results = new Map<string, StepResult>();

  beforeAll(async () => {
    cluster = await startCluster();
    results = await runBattery(cluster, steps);
  }, 240_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('has a battery step for every golden file', () => {
    expect(names.filter((n) => !stepByName.has(n))).toEqual([]);
  });

  it('answers the steps without a golden file with the status their name states', () => {
    const wrong: string[] = [];
    for (const s of steps) {
      if (names.includes(s.name) || s.compact) continue;
      const r = results.get(s.name);
      const want = statusFromName(s.name);
      if (!r?.ok) wrong.push(`${s.name}: ${r ? r.error.split('\n')[0] : 'not run'}`);
      else if (want !== undefined && r.observed.status !== want) {
        // A watch answers an expired resourceVersion with 200 and a single ERROR event carrying the Status.
        const errorEvent = r.observed.watch?.events.find((e) => e.type === 'ERROR');
        const code = (errorEvent?.object as { code?: number } | undefined)?.code;
        if (!(s.watch && r.observed.status === 200 && code === want))
          wrong.push(`${s.name}: ${r.observed.status}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  for (const name of names) {
    const reason = DELIBERATE[name];
    const test = reason ? it.fails : it;
    test(reason ? `${name} (deliberate difference: ${reason})` : name, () => {
      const r = results.get(name);
      if (!r) throw new Error(`step ${name} did not run`);
      if (!r.ok) throw new Error(`step ${name} failed: ${r.error}`);
      const diffs = compareExchange(loadGolden(name), r.observed, stepByName.get(name), SUBSET[name]);
      expect(diffs, formatDiffs(diffs)).toEqual([]);
    });
  }
});
