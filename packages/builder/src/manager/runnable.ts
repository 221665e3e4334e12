/**
 * Runnable knows how to run until its signal aborts (controller-runtime `manager.Runnable`).
 *
 * The manager puts each runnable in one group (controller-runtime `runnable_group.go`): a runnable whose
 * `needLeaderElection()` returns `false` runs on every replica once the caches have synced; any other
 * runnable (the method absent or returning `true`, as upstream) runs only while this replica leads.
 */
export interface Runnable {
  /** Runs until `signal` aborts; rejecting stops the manager with that error. Resolving early is fine. */
  start(signal: AbortSignal): Promise<void>;
  /** `false`: run on every replica. Absent or `true`: run only on the leader (controller-runtime `LeaderElectionRunnable`). */
  needLeaderElection?(): boolean;
}

/**
 * A leader-only runnable that can prepare on every replica before the election (controller-runtime
 * `WarmupRunnable`): the manager calls `warmup` once, after the caches started and before it campaigns, and
 * does not wait for it. A `Controller` built with `enableWarmup` starts its sources there.
 */
export interface WarmupRunnable extends Runnable {
  /** Prepares until ready (resolving), or until `signal` aborts (the manager stops); rejecting stops the manager. */
  warmup(signal: AbortSignal): Promise<void>;
}

/**
 * An HTTP server the manager runs first and stops last (probes, metrics): controller-runtime's
 * `HTTPServers` group. Add it with `Manager.addHTTPServer`.
 */
export interface HTTPServerRunnable {
  /** Serves until `signal` aborts, then closes; rejecting (e.g. the port is taken) stops the manager. */
  start(signal: AbortSignal): Promise<void>;
  /**
   * Resolves once the server accepts connections; the manager waits for it before it starts the caches.
   * Absent: the server counts as ready as soon as `start` was called.
   */
  ready?(signal: AbortSignal): Promise<void>;
}

/** What the manager passes to {@link LeaderElectorHook.run}. */
export interface LeaderElectionCallbacks {
  /** Call once, when this replica wins: the manager starts its leader-only runnables. */
  onStartedLeading(): void;
  /**
   * Call once, when leadership ends after it began. If the manager is not stopping, this is a lost lease:
   * the manager stops with a `LeaderElectionLostError` (controller-runtime exits on a lost lease).
   */
  onStoppedLeading(): void;
  /**
   * Asked after `signal` aborted, before a release-on-cancel: `true` when every leader-only runnable has
   * stopped, so giving the lease away cannot let another replica work alongside this one; `false` when
   * they did not stop within the graceful shutdown timeout (then keep the lease: others wait for expiry).
   */
  mayRelease(): boolean;
}

/**
 * The manager's leader-election hook point (implemented by `@kubeloop/builder`'s leader election, or by
 * a test double). The manager calls `run` once, after its non-leader runnables have started, and aborts
 * `signal` only once its leader-only runnables have stopped (or the graceful shutdown timeout passed).
 */
export interface LeaderElectorHook {
  /**
   * Campaigns until `signal` aborts, calling `callbacks` as leadership starts and ends; on abort it stops
   * renewing and, if configured and `callbacks.mayRelease()`, releases the lease. Resolves when done; a
   * rejection is a manager error.
   */
  run(signal: AbortSignal, callbacks: LeaderElectionCallbacks): Promise<void>;
}
