import { whenAborted } from '../internal-signals.js';

/** One runnable in a group: how to start it and, optionally, how to wait until it is ready. */
export interface GroupMember {
  start(signal: AbortSignal): Promise<void>;
  ready?(signal: AbortSignal): Promise<void>;
}

/**
 * A set of runnables started and stopped together (controller-runtime `runnableGroup`):
 * - before `start`, `add` queues; `start` starts every queued member once and waits for their readiness;
 * - after `start`, `add` starts the member at once (no readiness wait), exactly once;
 * - once `stop` was called, `add` ignores the member: nothing starts in a stopping group;
 * - `stop` aborts the group's signal and waits for every started member to settle.
 * A member that rejects, or whose readiness check rejects before `signal` aborts, is reported to
 * `onError`; the group does not stop by itself.
 * @internal
 */
export class RunnableGroup {
  readonly #queued: GroupMember[] = [];
  readonly #running = new Set<Promise<void>>();
  readonly #ac = new AbortController();
  #started = false;
  #stopping = false;

  constructor(
    readonly name: string,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Whether `start` has been called. */
  get started(): boolean {
    return this.#started;
  }

  /** Queues `member`, or starts it now when the group runs; ignored once the group is stopping. */
  add(member: GroupMember): void {
    if (this.#stopping) return;
    if (this.#started) this.#launch(member);
    else this.#queued.push(member);
  }

  /**
   * Starts every queued member, then waits until each one with a `ready` check is ready, or until
   * `signal` aborts. Calling it again does nothing.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#started || this.#stopping) return;
    this.#started = true;
    const members = this.#queued.splice(0);
    for (const m of members) this.#launch(m);
    await Promise.all(
      members.map((m) =>
        m.ready?.(signal).catch((err: unknown) => {
          // A readiness wait cut short because the manager is stopping is not a failure.
          if (!signal.aborted) this.onError(err);
        }),
      ),
    );
  }

  /**
   * Aborts the group's signal and waits for its members to settle, or for `deadline` to abort.
   * @returns `true` when every member settled, `false` when `deadline` came first.
   */
  async stop(deadline: AbortSignal): Promise<boolean> {
    this.#stopping = true;
    this.#queued.length = 0;
    this.#ac.abort();
    if (this.#running.size === 0) return true;
    if (deadline.aborted) return false;
    const timedOut = whenAborted(deadline);
    try {
      return await Promise.race([
        Promise.all(this.#running).then(() => true),
        timedOut.promise.then(() => false),
      ]);
    } finally {
      timedOut.off();
    }
  }

  #launch(member: GroupMember): void {
    let p: Promise<void>;
    try {
      p = member.start(this.#ac.signal);
    } catch (err) {
      p = Promise.reject(err);
    }
    const settled: Promise<void> = p.then(
      () => {
        this.#running.delete(settled);
      },
      (err: unknown) => {
        this.#running.delete(settled);
        this.onError(err);
      },
    );
    this.#running.add(settled);
  }
}
