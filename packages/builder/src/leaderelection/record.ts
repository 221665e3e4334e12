/** The `spec` of a coordination.k8s.io/v1 Lease as it travels on the wire (times are MicroTime strings). */
export interface LeaseSpecJSON {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
  [field: string]: unknown;
}

/**
 * What a lock holds (client-go `resourcelock.LeaderElectionRecord`). Times are wall-clock and only for
 * people reading the Lease: no replica judges expiry by them (see {@link LeaderElector}).
 */
export interface LeaderElectionRecord {
  /** Identity of the holder; `''` when nobody holds the lock (after a release). */
  readonly holderIdentity: string;
  /** How long, in **whole seconds**, others must wait after last seeing the record change. */
  readonly leaseDurationSeconds: number;
  readonly acquireTime: Date | undefined;
  readonly renewTime: Date | undefined;
  /** How many times the holder changed. */
  readonly leaderTransitions: number;
}

/** Formats a time as a Kubernetes `MicroTime` (RFC 3339, six fractional digits, UTC). */
export function formatMicroTime(d: Date): string {
  const iso = d.toISOString(); // 2006-01-02T15:04:05.000Z
  return `${iso.slice(0, 23)}000Z`;
}

function parseTime(v: unknown): Date | undefined {
  if (typeof v !== 'string' && !(v instanceof Date)) return undefined;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/** The Lease spec that stores `r` (client-go `LeaderElectionRecordToLeaseSpec`). */
export function recordToLeaseSpec(r: LeaderElectionRecord): LeaseSpecJSON {
  return {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    ...(r.acquireTime ? { acquireTime: formatMicroTime(r.acquireTime) } : {}),
    ...(r.renewTime ? { renewTime: formatMicroTime(r.renewTime) } : {}),
    leaseTransitions: r.leaderTransitions,
  };
}

/** The record a Lease spec holds (client-go `LeaseSpecToLeaderElectionRecord`); absent fields read as zero. */
export function leaseSpecToRecord(spec: LeaseSpecJSON | undefined): LeaderElectionRecord {
  return {
    holderIdentity: spec?.holderIdentity ?? '',
    leaseDurationSeconds: spec?.leaseDurationSeconds ?? 0,
    acquireTime: parseTime(spec?.acquireTime),
    renewTime: parseTime(spec?.renewTime),
    leaderTransitions: spec?.leaseTransitions ?? 0,
  };
}
