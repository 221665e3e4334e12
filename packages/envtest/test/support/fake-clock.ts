import type { ServerClock } from '../../src/index.js';

interface FakeTimer {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
}

/**
 * A manually stepped {@link ServerClock} for tests (the behaviour of `@kubeloop/client`'s `FakeClock`, which
 * envtest does not import): time moves only with `step`; due timers then fire synchronously in due order.
 */
export class FakeServerClock implements ServerClock {
  #now = 0;
  #seq = 0;
  readonly #timers: FakeTimer[] = [];

  now(): number {
    return this.#now;
  }

  setTimer(fn: () => void, delayMs: number): { cancel(): void } {
    const entry: FakeTimer = { at: this.#now + Math.max(0, delayMs || 0), seq: this.#seq++, fn };
    this.#timers.push(entry);
    return {
      cancel: () => {
        const i = this.#timers.indexOf(entry);
        if (i >= 0) this.#timers.splice(i, 1);
      },
    };
  }

  /** Advance by `ms`, firing every timer that becomes due (timers created meanwhile too). */
  step(ms: number): void {
    const until = this.#now + ms;
    for (;;) {
      let next: FakeTimer | undefined;
      for (const t of this.#timers)
        if (t.at <= until && (!next || t.at < next.at || (t.at === next.at && t.seq < next.seq))) next = t;
      if (!next) break;
      this.#timers.splice(this.#timers.indexOf(next), 1);
      this.#now = next.at;
      next.fn();
    }
    this.#now = until;
  }
}
