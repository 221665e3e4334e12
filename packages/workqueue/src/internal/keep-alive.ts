import type { Clock, ClockTimer } from '@kubeloop/core';

/**
 * Holds the Node.js event loop open while {@link KeepAlive.set} says it is needed. The queues' delay timers
 * never keep a process alive (a forgotten queue must not stop a program from exiting), but a worker that
 * awaits `get()` while an item waits for its delay would then see the process exit under it (Node's exit
 * code 13, "unsettled top-level await"). So the queue holds one {@link Clock.keepAlive} handle exactly while
 * some `get()` is pending **and** a delayed item will become ready; a clock without `keepAlive` holds nothing.
 */
export class KeepAlive {
  #handle: ClockTimer | undefined;

  constructor(private readonly clock: Clock) {}

  set(needed: boolean): void {
    if (needed) {
      if (this.#handle === undefined) this.#handle = this.clock.keepAlive?.();
    } else if (this.#handle !== undefined) {
      this.#handle.cancel();
      this.#handle = undefined;
    }
  }
}
