/** A live fault rule: its spec, how often it acted, and whether it still acts. */
import type { FaultSpec } from './spec.js';

/** A live rule, as the typed API and the admin endpoint return it. */
export interface FaultHandle {
  readonly id: string;
  readonly spec: Readonly<FaultSpec>;
  /** How many requests, watches or events the rule has acted on. */
  readonly hits: number;
  /** False once cleared or once `times` is used up. */
  readonly active: boolean;
  /** Remove the rule; requests and watches already affected keep their fate. */
  clear(): void;
}

/** mulberry32: a small seeded PRNG so that a probability rule can be replayed exactly. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** @internal a rule as the injector keeps it. */
export class Rule<S extends FaultSpec = FaultSpec> implements FaultHandle {
  hits = 0;
  cleared = false;
  /** delayRequests with a barrier: the requests waiting now. */
  waiting: Array<() => void> = [];
  readonly random: (() => number) | undefined;
  constructor(
    readonly id: string,
    readonly spec: S,
    private readonly onClear: (rule: Rule) => void,
  ) {
    if (spec.type === 'fail' && spec.probability !== undefined && spec.probability < 1) {
      this.random = spec.seed !== undefined ? seededRandom(spec.seed) : Math.random;
    }
  }
  get active(): boolean {
    return !this.cleared && (this.spec.times === undefined || this.hits < this.spec.times);
  }
  /** Count one use. Returns false (and counts nothing) when the rule is no longer active. */
  take(): boolean {
    if (!this.active) return false;
    this.hits++;
    return true;
  }
  clear(): void {
    if (this.cleared) return;
    this.cleared = true;
    for (const release of this.waiting.splice(0)) release();
    this.onClear(this as Rule);
  }
  toJSON(): Record<string, unknown> {
    return { id: this.id, spec: this.spec, hits: this.hits, active: this.active };
  }
}
