import type { LeaderElectorHook } from '@kubeloop/builder';
import { LeaderElector, newResourceLock, type ResourceLock } from '@kubeloop/builder/leaderelection';
import type { RestConfig } from '@kubeloop/config';
import { FakeClock } from '@kubeloop/core/testing';

/** Options of {@link SteadyElection}. */
export interface SteadyElectionOptions {
  /** Lease duration of every elector made here, in ms (`leaderElection.leaseDurationMs`). @defaultValue 4000 */
  readonly leaseDurationMs?: number;
  /** Renew deadline, in ms (`leaderElection.renewDeadlineMs`). @defaultValue 3000 */
  readonly renewDeadlineMs?: number;
  /** Retry period, in ms (`leaderElection.retryPeriodMs`). @defaultValue 500 */
  readonly retryPeriodMs?: number;
  /** Wall time between two steps of the clock while an elector runs, in ms. @defaultValue 100 */
  readonly stepEveryMs?: number;
  /** Wall-time timeout of each Lease request, in ms. @defaultValue 60000 */
  readonly requestTimeoutMs?: number;
}

/** What {@link SteadyElection.elector} campaigns for, and as whom. */
export interface SteadyElectorOptions {
  /** The candidate's identity (the Lease's holder). */
  readonly identity: string;
  /** Namespace of the Lease. */
  readonly namespace: string;
  /** Name of the Lease (`leaderElection.id`). */
  readonly name: string;
  /** Clear the holder when the manager stops (`leaderElection.releaseOnCancel`). @defaultValue true */
  readonly releaseOnCancel?: boolean;
}

/** A Lease write (acquire or renew) that succeeded: who, and the clock time the request was sent. */
export interface SteadyElectionWrite {
  readonly identity: string;
  readonly at: number;
}

/**
 * Leader election for tests of managers that elect because what they check needs a leader (leader-only work,
 * CA injection, a release on stop), not to test election itself. Pass {@link SteadyElection.elector} as the
 * manager's `leaderElection.elector`. Every elector made here runs on one {@link FakeClock}, moved to its next
 * due timer once per `stepEveryMs` of wall time while any of them runs — and only while no Lease request is in
 * flight, each of which may take `requestTimeoutMs` of wall time.
 *
 * On the real clock, a test process starved of CPU (a loaded CI box, a suite running beside it) can make a renew
 * late: the renew deadline passes and the manager stops with `LeaderElectionLostError` in the middle of a test
 * about something else. Here the clock does not move while a renew is under way, so a renew is never late and
 * short timings stay safe; renews still come about as often as on the real clock. It elects over the real
 * Lease API (envtest or a cluster), so the manager sees the same requests as in production.
 */
export class SteadyElection {
  /** The election's clock (the electors' time; read it to compare with {@link writes}). */
  readonly clock = new FakeClock();
  readonly #writes: SteadyElectionWrite[] = [];
  readonly #o: Required<SteadyElectionOptions>;
  #inFlight = 0;
  #running = 0;
  #stopDriving: (() => Promise<void>) | undefined;

  /** @throws RangeError for timings that are not ordered `leaseDurationMs > renewDeadlineMs > retryPeriodMs > 0`. */
  constructor(options: SteadyElectionOptions = {}) {
    this.#o = {
      leaseDurationMs: options.leaseDurationMs ?? 4000,
      renewDeadlineMs: options.renewDeadlineMs ?? 3000,
      retryPeriodMs: options.retryPeriodMs ?? 500,
      stepEveryMs: options.stepEveryMs ?? 100,
      requestTimeoutMs: options.requestTimeoutMs ?? 60_000,
    };
    const { leaseDurationMs: l, renewDeadlineMs: r, retryPeriodMs: p } = this.#o;
    if (!(l > r && r > p && p > 0))
      throw new RangeError(
        `SteadyElection timings must be ordered leaseDurationMs > renewDeadlineMs > retryPeriodMs > 0, got ${l}, ${r}, ${p}`,
      );
  }

  /** Successful Lease writes (acquire or renew) of every elector made here, in order. */
  get writes(): readonly SteadyElectionWrite[] {
    return this.#writes;
  }

  /** The `leaderElection.elector` of a manager: `identity` campaigning for Lease `namespace/name` through `config`. */
  elector(config: RestConfig, options: SteadyElectorOptions): LeaderElectorHook {
    const { identity, namespace, name, releaseOnCancel = true } = options;
    const lock = newResourceLock(config, {
      id: name,
      namespace,
      identity,
      renewDeadlineMs: this.#o.renewDeadlineMs,
      requestTimeoutMs: this.#o.requestTimeoutMs,
    });
    const track = async <T>(p: () => Promise<T>): Promise<T> => {
      this.#inFlight++;
      try {
        return await p();
      } finally {
        this.#inFlight--;
      }
    };
    const write = async (p: () => Promise<void>): Promise<void> => {
      const at = this.clock.now();
      await track(p);
      this.#writes.push({ identity, at });
    };
    const tracked: ResourceLock = {
      get: (signal) => track(() => lock.get(signal)),
      create: (record, signal) => write(() => lock.create(record, signal)),
      update: (record, signal) => write(() => lock.update(record, signal)),
      identity: () => lock.identity(),
      describe: () => lock.describe(),
      close: () => lock.close(),
    };
    const elector = new LeaderElector({
      lock: tracked,
      clock: this.clock,
      leaseDurationMs: this.#o.leaseDurationMs,
      renewDeadlineMs: this.#o.renewDeadlineMs,
      retryPeriodMs: this.#o.retryPeriodMs,
      releaseOnCancel,
      name,
    });
    return {
      run: async (signal, callbacks) => {
        if (this.#running++ === 0) this.#stopDriving = this.#drive();
        try {
          await elector.run(signal, {
            onStartedLeading: () => callbacks.onStartedLeading(),
            onStoppedLeading: () => callbacks.onStoppedLeading(),
            mayRelease: () => callbacks.mayRelease(),
          });
        } finally {
          if (--this.#running === 0) await this.#stopDriving?.();
        }
      },
    };
  }

  /** Moves the clock to its next due timer once per `stepEveryMs` of wall time, when no Lease request is in flight. */
  #drive(): () => Promise<void> {
    let stop = false;
    const loop = (async () => {
      while (!stop) {
        await new Promise((r) => setTimeout(r, this.#o.stepEveryMs));
        if (this.#inFlight > 0) continue;
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
