/**
 * The fault schedule: a seeded list of envtest faults at times within the run, and how each is applied to
 * the in-process API server. Faults that act on requests are scoped to the manager's bearer token, so the
 * traffic generator's writes (the ground truth) are never faulted; compaction and restart are server-wide.
 */
import type { ApiServer } from '@kubeloop/envtest';
import type { Random } from './random.js';

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

/** One scheduled fault. */
export interface ScheduledFault {
  /** **Milliseconds** after the fault phase starts. */
  readonly atMs: number;
  readonly kind: FaultKind;
  /** How many requests/watches it acts on (where that applies). */
  readonly times: number;
  /** A kind-specific number: ms for watchDrop/delayEvents, the status for serverError, the frame for brokenFrame. */
  readonly param: number;
}

/** Draw a schedule: faults at exponential-ish gaps of about `meanGapMs` over `durationMs`. */
export function drawSchedule(
  random: Random,
  durationMs: number,
  meanGapMs: number,
  kinds: readonly FaultKind[],
): ScheduledFault[] {
  const out: ScheduledFault[] = [];
  if (kinds.length === 0) return out;
  let t = random.int(0, meanGapMs);
  while (t < durationMs) {
    const kind = random.pick(kinds);
    const times = random.int(1, 3);
    let param = 0;
    if (kind === 'watchDrop') param = random.int(0, 500);
    else if (kind === 'serverError') param = random.pick([500, 503]);
    else if (kind === 'brokenFrame') param = random.int(0, 3);
    else if (kind === 'delayEvents') param = random.int(50, 1000);
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
export async function applyFault(f: ScheduledFault, target: FaultTarget): Promise<void> {
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
