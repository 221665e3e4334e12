/**
 * Ground truth: replays `test/golden/1.32/battery.json` in order against a fresh envtest server and compares the
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
  WIRE_MISSING,
  WIRE_REQUIRED,
} from '../support/golden.js';
import { formatDiffs } from '../support/shape.js';

const steps = loadBattery();

// The ground truth lives outside this repository; without it the cases below are not generated.
it.skipIf(WIRE_MISSING !== undefined && !WIRE_REQUIRED)('reads the golden wire data', () => {
  expect(WIRE_MISSING).toBeUndefined();
});
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

/** A deliberate strict-mode difference: the diff path it covers (a `*` suffix covers the subtree) and why. */
interface StrictDifference {
  readonly path: string;
  readonly reason: string;
}

/**
 * Every difference the strict comparison finds on purpose, per golden; each is repeated with its reason in the
 * README ("Deliberate differences"). A difference not listed here fails, and so does a listed one that is gone.
 */
const STRICT_DIFFERENCES: Record<string, readonly StrictDifference[]> = {
  version: [
    {
      path: '$.gitVersion',
      reason: 'envtest names itself (v1.32.4-kubeloop); major/minor are the recorded server',
    },
    { path: '$.gitCommit', reason: 'envtest is not built from a kubernetes commit: forty zeros' },
  ],
};

function strictPathMatches(path: string, listed: string): boolean {
  return listed.endsWith('*') ? path.startsWith(listed.slice(0, -1)) : path === listed;
}

/** The HTTP status a step without a golden file must answer, read from its name (`…-422`). */
function statusFromName(name: string): number | undefined {
  const m = /-(\d{3})$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

describe.skipIf(WIRE_MISSING !== undefined && !WIRE_REQUIRED)(
  'golden battery replay (kube-apiserver v1.32 goldens)',
  { timeout: 30_000 },
  () => {
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

    it('watch and list steps without a golden file behave as kube-apiserver does', () => {
      const observed = (name: string) => {
        const r = results.get(name);
        if (!r?.ok) throw new Error(`step ${name} did not run: ${r ? r.error : 'missing'}`);
        return r.observed;
      };
      const types = (name: string) => (observed(name).watch?.events ?? []).map((e) => e.type);
      // sendInitialEvents: the current pods as ADDED, then one BOOKMARK marking the end of the initial events.
      const initial = observed('watch-send-initial-events').watch?.events ?? [];
      const bookmark = initial.find((e) => e.type === 'BOOKMARK');
      expect(initial.filter((e) => e.type === 'ADDED').length).toBeGreaterThan(0);
      expect(
        (bookmark?.object as { metadata?: { annotations?: Record<string, string> } })?.metadata?.annotations,
      ).toEqual({ 'k8s.io/initial-events-end': 'true' });
      expect(initial.indexOf(bookmark as (typeof initial)[number])).toBe(
        initial.filter((e) => e.type === 'ADDED').length,
      );
      // A label change that joins a selector is ADDED, one that leaves it is DELETED.
      expect(types('watch-label-selector-leave-join').filter((t) => t !== 'BOOKMARK')).toEqual(
        expect.arrayContaining(['ADDED', 'DELETED']),
      );
      // Table watch: every event carries a one-row Table; only the first has column definitions.
      const tables = (observed('watch-table').watch?.events ?? [])
        .filter((e) => e.type !== 'BOOKMARK')
        .map((e) => e.object as { kind: string; rows: unknown[]; columnDefinitions?: unknown[] });
      expect(tables.length).toBeGreaterThan(1);
      for (const t of tables) {
        expect(t.kind).toBe('Table');
        expect(t.rows).toHaveLength(1);
      }
      expect(tables[0]?.columnDefinitions?.length).toBeGreaterThan(0);
      for (const t of tables.slice(1)) expect(t.columnDefinitions ?? []).toHaveLength(0);
      // resourceVersion=0 is served from the cache: limit is ignored.
      const rv0 = JSON.parse(observed('pod-list-rv0-limit-ignored').text) as { items: unknown[] };
      expect(rv0.items.length).toBeGreaterThan(1);
      // A watch from a compacted resourceVersion: 410 Expired, either as the HTTP status (envtest, for compacted
      // RVs) or as 200 + a single ERROR event (for RVs that only left the history window); both end the watch.
      const expired = observed('watch-very-old-rv-410');
      const status =
        expired.status === 200 ? expired.watch?.events[0]?.object : (JSON.parse(expired.text) as unknown);
      expect(status).toMatchObject({ kind: 'Status', reason: 'Expired', code: 410 });
      if (expired.status === 200) {
        expect(expired.watch?.events.map((e) => e.type)).toEqual(['ERROR']);
        expect(expired.watch?.endedBy).toBe('server');
      } else expect(expired.status).toBe(410);
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

    describe('strict', () => {
      for (const name of names) {
        it(name, () => {
          const r = results.get(name);
          if (!r?.ok) throw new Error(`step ${name} did not run`);
          const diffs = compareExchange(loadGolden(name), r.observed, stepByName.get(name), { strict: true });
          const allowed = STRICT_DIFFERENCES[name] ?? [];
          const unexplained = diffs.filter((d) => !allowed.some((a) => strictPathMatches(d.path, a.path)));
          expect(unexplained, formatDiffs(unexplained)).toEqual([]);
          const stale = allowed.filter((a) => !diffs.some((d) => strictPathMatches(d.path, a.path)));
          expect(stale, 'listed deliberate differences that no longer occur').toEqual([]);
        });
      }
    });
  },
);
