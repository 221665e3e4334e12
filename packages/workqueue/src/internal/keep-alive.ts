const noop = (): void => {};

/**
 * Holds the Node.js event loop open while {@link KeepAlive.set} says it is needed. The queues' delay timers
 * never keep a process alive (a forgotten queue must not stop a program from exiting), but a worker that
 * awaits `get()` while an item waits for its delay would then see the process exit under it (Node's exit
 * code 13, "unsettled top-level await"). So the queue holds one referenced timer exactly while some
 * `get()` is pending **and** a delayed item will become ready; with an injected clock it does nothing.
 */
export class KeepAlive {
  #handle: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly enabled: boolean) {}

  set(needed: boolean): void {
    if (!this.enabled) return;
    if (needed && this.#handle === undefined) this.#handle = setInterval(noop, 2 ** 30);
    else if (!needed && this.#handle !== undefined) {
      clearInterval(this.#handle);
      this.#handle = undefined;
    }
  }
}
