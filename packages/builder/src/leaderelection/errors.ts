/**
 * A leader election setting is invalid (client-go `NewLeaderElector`'s checks: `leaseDuration >
 * renewDeadline > 1.2 × retryPeriod`, every duration > 0, a lock with a non-empty identity), or the lease
 * namespace could not be found. Code `'ERR_LEADER_ELECTION_CONFIG'`.
 */
export class LeaderElectionConfigError extends Error {
  readonly code = 'ERR_LEADER_ELECTION_CONFIG' as const;
  override readonly name = 'LeaderElectionConfigError';
}
