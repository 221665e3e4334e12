/**
 * The callers of `shutDownWithDrain` waiting until no handed-out item is left unfinished (client-go
 * `ShutDownWithDrain` waits for the processing set to empty). Shared by every queue of the package.
 */
export class DrainWaiters {
  private waiters: (() => void)[] = [];

  /** Resolves at once when `processing` is 0, else at the next {@link DrainWaiters.release}. */
  wait(processing: number): Promise<void> {
    if (processing === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Call when the last item being processed is done: wakes every waiting caller. */
  release(): void {
    if (this.waiters.length === 0) return;
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w();
  }
}
