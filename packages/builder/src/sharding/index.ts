/**
 * Sharded active-active reconciling over member Leases: {@link newSharding},
 * {@link Sharding}, the rendezvous hash and the hand-over state machine.
 */

export type { ShardAttachment } from './attachment.js';
export { ShardingConfigError } from './errors.js';
export { rendezvousOwner, rendezvousWeight } from './hash.js';
export { memberRecord, SHARD_DRAINED_ANNOTATION, SHARD_NAME_LABEL } from './member-lease.js';
export type { ShardingOptions } from './options.js';
export { newSharding, Sharding } from './sharding.js';
export { type MemberRecord, ShardState, type ShardTimings } from './state.js';
