import { type ApiClient, isNotFound } from '@kubeloop/client';
import { recordToLeaseSpec } from '../leaderelection/record.js';
import { LeaseKind, type LeaseObject } from '../leaderelection/resource-lock.js';
import type { MemberRecord } from './state.js';

/** Label on every member Lease: the sharding group's name. */
export const SHARD_NAME_LABEL = 'shard.kubeloop.dev/name';
/** Annotation on a member Lease: the comma-separated member set its holder has drained for (its acknowledgement). */
export const SHARD_DRAINED_ANNOTATION = 'shard.kubeloop.dev/drained-for';

/** The member record of a Lease as read from the API server. */
export function memberRecord(lease: LeaseObject): MemberRecord {
  const ann = lease.metadata?.annotations?.[SHARD_DRAINED_ANNOTATION];
  return {
    identity: lease.spec?.holderIdentity ?? '',
    version: lease.metadata?.resourceVersion ?? '',
    drainedFor: ann === undefined ? undefined : ann.split(',').filter((m) => m !== ''),
  };
}

/** Where {@link writeMemberLease} writes and what it writes. */
export interface MemberLeaseWrite {
  readonly namespace: string;
  /** The Lease's name (`<group>-shard-<identity>`). */
  readonly name: string;
  /** The sharding group's name (the {@link SHARD_NAME_LABEL} value). */
  readonly group: string;
  readonly identity: string;
  /** Lease duration in **milliseconds** (written as whole seconds, at least 1). */
  readonly leaseMs: number;
  /** The member set drained for (the {@link SHARD_DRAINED_ANNOTATION}); undefined removes the annotation. */
  readonly ack: readonly string[] | undefined;
  readonly signal: AbortSignal;
}

/**
 * Renews a member Lease: reads it when `held.lease` is unknown, creates it when absent, else updates it
 * (keeping its acquire time). `held.lease` follows each step, so a write cut short leaves what was last read.
 * The optimistic update fails with a conflict when someone else wrote it, as client-go's LeaseLock update does.
 * @throws the client's errors (a conflict, a timeout, the signal's abort).
 */
export async function writeMemberLease(
  client: ApiClient,
  held: { lease?: LeaseObject },
  w: MemberLeaseWrite,
): Promise<void> {
  const now = new Date();
  const spec = recordToLeaseSpec({
    holderIdentity: w.identity,
    leaseDurationSeconds: Math.max(1, Math.ceil(w.leaseMs / 1000)),
    acquireTime: now,
    renewTime: now,
    leaderTransitions: 0,
  });
  const annotate = (existing: Record<string, string> | undefined): Record<string, string> => {
    const out = { ...(existing ?? {}) };
    delete out[SHARD_DRAINED_ANNOTATION];
    if (w.ack) out[SHARD_DRAINED_ANNOTATION] = w.ack.join(',');
    return out;
  };
  const ref = { namespace: w.namespace, name: w.name };
  const { signal } = w;
  if (!held.lease) {
    try {
      held.lease = await client.get(LeaseKind, ref, { signal });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      held.lease = await client.create(
        LeaseKind,
        {
          apiVersion: LeaseKind.apiVersion,
          kind: LeaseKind.kind,
          metadata: { ...ref, labels: { [SHARD_NAME_LABEL]: w.group }, annotations: annotate(undefined) },
          spec,
        },
        { signal },
      );
      return;
    }
  }
  const cur = held.lease;
  held.lease = await client.update(
    LeaseKind,
    {
      ...cur,
      metadata: { ...cur.metadata, annotations: annotate(cur.metadata?.annotations) },
      spec: { ...cur.spec, ...spec, acquireTime: cur.spec?.acquireTime ?? spec.acquireTime },
    },
    { signal },
  );
}
