/** The figures a chaos run reports, whether they hold, and the lines a run prints. */
import type { FaultKind, RealFaultKind } from './schedule.js';

/** The figures of one run. The promises: every figure under "must be 0" is 0. */
export interface ChaosReport {
  readonly seed: number;
  /** Where the run ran: envtest's in-process server, or a real kube-apiserver + etcd. */
  readonly target: 'envtest' | 'real';
  readonly objects: number;
  readonly durationMs: number;
  /** Faults applied, per kind. */
  readonly faultsApplied: Readonly<Partial<Record<FaultKind | RealFaultKind, number>>>;
  /** Scheduled faults dropped because the phase had ended before their turn (slow faults delay the next ones). */
  readonly faultsSkipped: number;
  /** Faults that could not be applied (e.g. a restart that did not come back in time), per kind. */
  readonly faultsFailed: Readonly<Partial<Record<FaultKind | RealFaultKind, number>>>;
  /** Traffic writes made, and how many of them failed (e.g. during a restart; not a violation). */
  readonly writes: number;
  readonly writeErrors: number;
  /** Reconciles run, and how many threw (retried by the controller). */
  readonly reconciles: number;
  readonly reconcileErrors: number;
  /** Must be 0: objects whose last write no reconcile saw (present: its final resourceVersion; deleted: NotFound). */
  readonly lostChanges: number;
  /** Must be 0: keys where the manager's cache and the server differ (by resourceVersion) at the end of the settle phase. */
  readonly divergentCacheEntries: number;
  /** **Milliseconds** from the end of the faults until the cache equalled the server and nothing was lost (-1: never within `settleMs`). */
  readonly settledAfterMs: number;
  /** Must be 0: reconciles that started while another of the same key ran. */
  readonly concurrentReconciles: number;
  /** Must be 0: unhandled promise rejections in the process during the run. */
  readonly unhandledRejections: number;
  /** Must be empty: what the invariant reported. */
  readonly invariantViolations: readonly string[];
  /** Some examples of lost and divergent keys, for the failure message. */
  readonly examples: readonly string[];
}

/** One member cluster's share of a {@link MultiClusterChaosReport}. */
export interface ClusterChaosFigures {
  readonly name: string;
  /** Faults applied to this cluster's server, per kind. */
  readonly faultsApplied: Readonly<Partial<Record<FaultKind, number>>>;
  readonly writes: number;
  readonly writeErrors: number;
  /** Reconciles of this cluster's keys (every replica). */
  readonly reconciles: number;
  /** Must be 0: this cluster's objects whose last write no reconcile saw. */
  readonly lostChanges: number;
  /** Must be 0: this cluster's entries where a replica's cache differs from the server. */
  readonly divergentCacheEntries: number;
}

/**
 * The figures of a multi-cluster run ({@link runMultiClusterChaos}): the totals over every member cluster in the
 * {@link ChaosReport} fields (`objects` is per cluster; `concurrentReconciles` counts overlaps of one
 * (cluster, key) on any replicas), and each cluster's share.
 */
export interface MultiClusterChaosReport extends ChaosReport {
  /** The replay command's profile (`npm run test:chaos -- --profile <profile> --seed <seed>`). */
  readonly profile: string;
  readonly replicas: number;
  readonly clusters: readonly ClusterChaosFigures[];
}

/** Whether every promise held. */
export function chaosPassed(r: ChaosReport): boolean {
  return (
    r.lostChanges === 0 &&
    r.divergentCacheEntries === 0 &&
    r.concurrentReconciles === 0 &&
    r.unhandledRejections === 0 &&
    r.invariantViolations.length === 0
  );
}

/** The report as the lines a run prints (the seed first, so a failing run can be replayed). */
export function formatChaosReport(r: ChaosReport | MultiClusterChaosReport): string {
  const multi = 'clusters' in r ? r : undefined;
  const faults = Object.entries(r.faultsApplied)
    .map(([k, n]) => `${k}=${n}`)
    .join(' ');
  const failed = Object.entries(r.faultsFailed)
    .map(([k, n]) => `${k}=${n}`)
    .join(' ');
  const replay = multi
    ? `npm run test:chaos -- --profile ${multi.profile} --seed ${r.seed}`
    : `npm run test:chaos -- --seed ${r.seed}${r.target === 'real' ? ' --target real --assets <dir>' : ''}`;
  const shape = multi ? ` clusters=${multi.clusters.length} replicas=${multi.replicas}` : '';
  return [
    `chaos target=${r.target}${shape} seed=${r.seed} objects=${r.objects}${multi ? ' per cluster' : ''} durationMs=${r.durationMs} (replay: ${replay})`,
    `  faults: ${faults || 'none'}${failed ? `  (not applied: ${failed})` : ''}${r.faultsSkipped ? `  (${r.faultsSkipped} dropped: the phase had ended)` : ''}`,
    `  writes=${r.writes} writeErrors=${r.writeErrors} reconciles=${r.reconciles} reconcileErrors=${r.reconcileErrors}`,
    `  lost changes=${r.lostChanges}  divergent cache entries=${r.divergentCacheEntries} (settled after ${r.settledAfterMs} ms)`,
    `  concurrent reconciles of one key=${r.concurrentReconciles}  unhandled rejections=${r.unhandledRejections}`,
    `  invariant violations=${r.invariantViolations.length}${r.invariantViolations.length ? `: ${r.invariantViolations.slice(0, 5).join('; ')}` : ''}`,
    ...(multi?.clusters.map(
      (c) =>
        `  ${c.name}: faults=${Object.values(c.faultsApplied).reduce((a, b) => a + (b ?? 0), 0)} writes=${c.writes} reconciles=${c.reconciles} lost=${c.lostChanges} divergent=${c.divergentCacheEntries}`,
    ) ?? []),
    ...(r.examples.length ? [`  examples: ${r.examples.join(', ')}`] : []),
    `  ${chaosPassed(r) ? 'PASS' : 'FAIL'}`,
  ].join('\n');
}
