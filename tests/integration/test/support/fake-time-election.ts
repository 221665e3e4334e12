import type { LeaderElectorHook } from '@kubeloop/builder';
import { LeaderElector, newResourceLock, type ResourceLock } from '@kubeloop/builder/leaderelection';
import type { RestConfig } from '@kubeloop/config';
import { FakeClock } from '@kubeloop/core/testing';
import type { ApiServer } from '@kubeloop/envtest';
import { FAST, type LeaseTimings, type Replica, replicaConfig } from './leader-election.js';

/** Options of {@link FakeTimeElection.elector} beyond the timings. */
export interface ElectorOptions {
  /** Clear the holder when the manager stops (the manager's `leaderElection.releaseOnCancel`). @defaultValue false */
  readonly releaseOnCancel?: boolean;
  /** Wall-time timeout of each Lease request. @defaultValue the lock's, max(1 s, renew deadline / 2) */
  readonly requestTimeoutMs?: number;
}

/**
 * The electors of a test's replicas on one FakeClock (real replicas' clocks tick at one rate; which one reads
 * what is the point, not the wall time it takes). The clock moves from one due timer to the next only when the election
 * is quiet: no Lease request in flight, and every replica that stopped or lost its lease has finished
 * stopping. So a loaded machine cannot make a renew "late" (it was, before: a renew that took more than the
 * 1.5 s renew deadline of wall time lost the lease in the middle of the test), and the times compared are
 * the clock times the Lease writes were sent, exact.
 */
export class FakeTimeElection {
  readonly clock = new FakeClock();
  /** The lease timings of every elector made here (ms). */
  readonly timings: LeaseTimings;
  /** Successful Lease writes (acquire or renew): who, and the clock time the request was sent. */
  readonly writes: Array<{ readonly identity: string; readonly at: number }> = [];
  /** Lease reads that came back, by identity. */
  readonly reads = new Map<string, number>();
  /** Clock time each identity stopped leading. */
  readonly stoppedLeading = new Map<string, number>();
  #inFlight = 0;
  readonly #replicas: Replica[] = [];
  readonly #settled = new Set<Replica>();

  constructor(timings: LeaseTimings = FAST) {
    this.timings = timings;
  }

  /**
   * The leader elector of replica `identity`, on this clock, with this election's timings, over the in-process
   * server (with the replica's own token) or a RestConfig (the run's API server, real cluster included).
   */
  elector(
    target: ApiServer | RestConfig,
    identity: string,
    namespace: string,
    lease: string,
    options: ElectorOptions = {},
  ): LeaderElectorHook {
    const config = 'faults' in target ? replicaConfig(target, identity) : target;
    const lock = newResourceLock(config, {
      id: lease,
      namespace,
      identity,
      renewDeadlineMs: this.timings.renewDeadlineMs,
      requestTimeoutMs: options.requestTimeoutMs,
    });
    const track = async <T>(p: Promise<T>): Promise<T> => {
      this.#inFlight++;
      try {
        return await p;
      } finally {
        this.#inFlight--;
      }
    };
    const write = async (p: () => Promise<void>) => {
      const at = this.clock.now();
      await track(p());
      this.writes.push({ identity, at });
    };
    const counted: ResourceLock = {
      get: async (signal) => {
        const got = await track(lock.get(signal));
        this.reads.set(identity, (this.reads.get(identity) ?? 0) + 1);
        return got;
      },
      create: (record, signal) => write(() => lock.create(record, signal)),
      update: (record, signal) => write(() => lock.update(record, signal)),
      identity: () => lock.identity(),
      describe: () => lock.describe(),
      close: () => lock.close(),
    };
    const elector = new LeaderElector({
      lock: counted,
      clock: this.clock,
      leaseDurationMs: this.timings.leaseDurationMs,
      renewDeadlineMs: this.timings.renewDeadlineMs,
      retryPeriodMs: this.timings.retryPeriodMs,
      releaseOnCancel: options.releaseOnCancel,
      name: lease,
    });
    return {
      run: (signal, callbacks) =>
        elector.run(signal, {
          onStartedLeading: () => callbacks.onStartedLeading(),
          onStoppedLeading: () => {
            this.stoppedLeading.set(identity, this.clock.now());
            callbacks.onStoppedLeading();
          },
          mayRelease: () => callbacks.mayRelease(),
        }),
    };
  }

  /** Follows `r` for the quiet rule. */
  add(r: Replica): Replica {
    this.#replicas.push(r);
    void r.done.then(() => this.#settled.add(r));
    return r;
  }

  firstWrite(identity: string): number | undefined {
    return this.writes.find((w) => w.identity === identity)?.at;
  }

  lastWrite(identity: string): number | undefined {
    return this.writes.findLast((w) => w.identity === identity)?.at;
  }

  #quiet(): boolean {
    if (this.#inFlight > 0) return false;
    return this.#replicas.every(
      (r) => this.#settled.has(r) || !(r.stop.signal.aborted || this.stoppedLeading.has(r.identity)),
    );
  }

  /**
   * Drives the clock in the background until the returned function is called: one step to the next due timer
   * per `pauseMs` of wall time, when the election is quiet.
   */
  drive(pauseMs = 2): () => Promise<void> {
    let stop = false;
    const loop = (async () => {
      while (!stop) {
        await new Promise((r) => setTimeout(r, pauseMs));
        if (!this.#quiet()) continue;
        const at = this.clock.nextTimerAt();
        if (at !== undefined) this.clock.setTime(at);
      }
    })();
    return async () => {
      stop = true;
      await loop;
    };
  }
}
