/** A seeded random source (mulberry32), so that a schedule and its traffic replay exactly from a seed. */
export interface Random {
  /** The seed this source started from. */
  readonly seed: number;
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max] (inclusive). */
  int(min: number, max: number): number;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** A new independent source derived from this one (so adding draws in one stream leaves the other alone). */
  fork(): Random;
}

/** A {@link Random} from a 32-bit seed. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const r: Random = {
    seed: seed >>> 0,
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => {
      if (items.length === 0) throw new RangeError('pick from an empty array');
      return items[Math.floor(next() * items.length)] as (typeof items)[number];
    },
    chance: (p) => next() < p,
    fork: () => seededRandom(Math.floor(next() * 4294967296)),
  };
  return r;
}

/** A fresh seed for a run that was not given one (printed, so a failing run can be replayed). */
export function randomSeed(): number {
  return Math.floor(Math.random() * 4294967296) >>> 0;
}
