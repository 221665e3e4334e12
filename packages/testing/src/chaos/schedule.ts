/**
 * The fault schedule: a seeded list of envtest faults at times within the run, and how each is applied to
 * the in-process API server. Faults that act on requests are scoped to the manager's bearer token, so the
 * traffic generator's writes (the ground truth) are never faulted; compaction and restart are server-wide.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiServer } from '@kubeloop/envtest';
import type { Random } from './random.js';
import type { RealControlPlane } from './real/control-plane.js';

/** Every fault the schedule draws from. */
export const FAULT_KINDS = [
  'watchDrop',
  'blackholeWatch',
  'expireWatch',
  'expireList',
  'expireContinue',
  'serverError',
  'throttle',
  'brokenFrame',
  'delayEvents',
  'compaction',
  'restart',
] as const;
/**
 * One kind of fault: `watchDrop` (watches end cleanly after a few ms), `blackholeWatch` (a watch gets
 * headers then silence until the next fault releases it), `expireWatch` / `expireList` / `expireContinue`
 * (410 Expired on a watch, a list, a paged list's continue), `serverError` (500/503 on any request),
 * `throttle` (429 with `Retry-After: 1`), `brokenFrame` (a watch frame cut in half, or an HTML line, then
 * the stream ends), `delayEvents` (events about some objects arrive up to 1 s late), `compaction` (the
 * store forgets old resourceVersions), `restart` (every connection dropped; state and resourceVersions
 * kept, as an API server restart over the same etcd).
 */
export type FaultKind = (typeof FAULT_KINDS)[number];

/**
 * The faults of a real control plane ({@link RealControlPlane}): `apiserverPause` (SIGSTOP for `param` ms, then
 * SIGCONT: every connection a black hole), `apiserverRestart` (SIGKILL, start again on the same etcd),
 * `etcdRestart` (SIGKILL etcd, start it again on its data), `compaction` (etcd compacted at its current
 * revision: older resourceVersions answer 410), and on the TCP proxy between the manager and the server:
 * `connectionReset` (RST on every connection), `connectionDrop` (FIN on every connection), `networkDelay`
 * (every byte `param` ms late for 3 s), `partition` (no byte flows for `param` ms, then the partition heals).
 */
export const REAL_FAULT_KINDS = [
  'apiserverPause',
  'apiserverRestart',
  'etcdRestart',
  'compaction',
  'connectionReset',
  'connectionDrop',
  'networkDelay',
  'partition',
] as const;
/** One kind of fault of a real control plane; see {@link REAL_FAULT_KINDS}. */
export type RealFaultKind = (typeof REAL_FAULT_KINDS)[number];

/** One scheduled fault. */
export interface ScheduledFault<K extends string = FaultKind> {
  /** **Milliseconds** after the fault phase starts. */
  readonly atMs: number;
  readonly kind: K;
  /** How many requests/watches it acts on (where that applies). */
  readonly times: number;
  /**
   * A kind-specific number: ms for watchDrop/delayEvents, the status for serverError, the frame for brokenFrame;
   * on a real control plane, ms for apiserverPause, networkDelay and partition.
   */
  readonly param: number;
}

/** Draw a schedule: faults at exponential-ish gaps of about `meanGapMs` over `durationMs`. */
export function drawSchedule<K extends string = FaultKind>(
  random: Random,
  durationMs: number,
  meanGapMs: number,
  kinds: readonly K[],
): ScheduledFault<K>[] {
  const out: ScheduledFault<K>[] = [];
  if (kinds.length === 0) return out;
  let t = random.int(0, meanGapMs);
  while (t < durationMs) {
    const kind = random.pick(kinds);
    const times = random.int(1, 3);
    let param = 0;
    const k: string = kind;
    if (k === 'watchDrop') param = random.int(0, 500);
    else if (k === 'serverError') param = random.pick([500, 503]);
    else if (k === 'brokenFrame') param = random.int(0, 3);
    else if (k === 'delayEvents') param = random.int(50, 1000);
    else if (k === 'apiserverPause' || k === 'partition') param = random.int(500, 6000);
    else if (k === 'networkDelay') param = random.int(50, 1000);
    out.push({ atMs: t, kind, times, param });
    t += random.int(Math.floor(meanGapMs / 2), Math.floor((meanGapMs * 3) / 2));
  }
  return out;
}

/** Where faults are applied. */
export interface FaultTarget {
  readonly server: ApiServer;
  /** The manager's bearer token: request faults match only its requests. */
  readonly token: string;
  readonly namespace: string;
  /** Prefix of the names the traffic writes (for `delayEvents`); absent skips that fault. */
  readonly namePrefix?: string | undefined;
}

/** Apply one fault now. Black-holed watches from an earlier fault are released first. */
export async function applyFault(f: ScheduledFault<FaultKind>, target: FaultTarget): Promise<void> {
  const { server, token, namespace } = target;
  const faults = server.faults;
  faults.releaseBlackholes(true);
  const watch = { verb: 'watch' as const, token };
  switch (f.kind) {
    case 'watchDrop':
      faults.endWatches({ match: watch, afterMs: f.param, times: f.times });
      return;
    case 'blackholeWatch':
      faults.blackhole({ match: watch, times: 1 });
      return;
    case 'expireWatch':
      faults.expire({ match: watch, times: 1 });
      return;
    case 'expireList':
      faults.expire({ match: { verb: 'list', token, hasContinue: false }, times: 1 });
      return;
    case 'expireContinue':
      faults.expire({ match: { verb: 'list', token, hasContinue: true }, times: 1 });
      return;
    case 'serverError':
      faults.failRequests({ match: { token }, status: f.param, times: f.times });
      return;
    case 'throttle':
      faults.failRequests({ match: { token }, status: 429, retryAfterSeconds: 1, times: f.times });
      return;
    case 'brokenFrame':
      faults.shapeWatch({
        match: watch,
        times: 1,
        steps:
          f.param % 2 === 0
            ? [{ op: 'pass', count: f.param + 1 }, { op: 'truncate' }]
            : [
                { op: 'pass', count: f.param },
                { op: 'raw', data: '<html><body>502 Bad Gateway</body></html>\n', after: 'end' },
              ],
      });
      return;
    case 'delayEvents':
      if (target.namePrefix === undefined) return;
      faults.delayEvents({
        match: { token },
        namespace,
        namePrefix: target.namePrefix,
        delayMs: f.param,
        times: 5 * f.times,
      });
      return;
    case 'compaction':
      faults.compact();
      return;
    case 'restart':
      await faults.restart({ keepState: true });
      return;
  }
}

/**
 * Apply one fault of a real control plane now. Faults with a duration (`apiserverPause`, `networkDelay`,
 * `partition`) resolve when it has passed and the fault is undone; restarts resolve once the API server is
 * healthy again.
 * @throws what the control plane throws (a process that does not come back healthy, etcd refusing compaction).
 */
export async function applyRealFault(
  f: ScheduledFault<RealFaultKind>,
  target: RealControlPlane,
): Promise<void> {
  switch (f.kind) {
    case 'apiserverPause':
      target.pauseApiServer();
      try {
        await sleep(f.param);
      } finally {
        target.resumeApiServer();
      }
      return;
    case 'apiserverRestart':
      await target.restartApiServer();
      return;
    case 'etcdRestart':
      await target.restartEtcd();
      return;
    case 'compaction':
      await target.compactEtcd();
      return;
    case 'connectionReset':
      target.proxy.resetAll();
      return;
    case 'connectionDrop':
      target.proxy.dropAll();
      return;
    case 'networkDelay':
      target.proxy.setDelay(f.param);
      try {
        await sleep(3000);
      } finally {
        target.proxy.setDelay(0);
      }
      return;
    case 'partition':
      target.proxy.partition();
      try {
        await sleep(f.param);
      } finally {
        target.proxy.heal();
      }
      return;
  }
}
