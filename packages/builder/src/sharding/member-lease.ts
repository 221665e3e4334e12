import type { LeaseObject } from '../leaderelection/resource-lock.js';
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
