/** The manager's graceful shutdown timeout passed before its runnables stopped. Code `'ERR_SHUTDOWN_TIMEOUT'`. */
export class GracefulShutdownTimeoutError extends Error {
  readonly code = 'ERR_SHUTDOWN_TIMEOUT' as const;
  override readonly name = 'GracefulShutdownTimeoutError';
}

/** This replica lost its lease while the manager was running (controller-runtime exits then). Code `'ERR_LEADER_ELECTION_LOST'`. */
export class LeaderElectionLostError extends Error {
  readonly code = 'ERR_LEADER_ELECTION_LOST' as const;
  override readonly name = 'LeaderElectionLostError';
}
