/** A sharding option is invalid (empty name or namespace, an identity that cannot name a Lease, bad timings). Code `'ERR_SHARDING_CONFIG'`. */
export class ShardingConfigError extends Error {
  readonly code = 'ERR_SHARDING_CONFIG' as const;
  override readonly name = 'ShardingConfigError';
}
