import { Ring } from './ring.js';

/** The FIFO of one priority; entries are removed lazily (an entry that stopped being live is skipped). */
interface Level<E> {
  priority: number;
  readonly fifo: Ring<E>;
  /** Live entries in the FIFO. */
  live: number;
}

/**
 * The ready items of a priority queue: one FIFO per priority, the levels sorted highest first, so push and
 * pop are O(1) for the usual handful of priorities (controller-runtime's priority queue keeps them in one
 * B-tree ordered by priority, then by the time they became ready: the same order). An entry leaves its level
 * lazily: when {@link PriorityLevels.unlink} is called for it, it stays in its FIFO and `isLive` must then
 * say `false` for it, so `pop` skips it.
 *
 * Fair share: with a finite `fairnessWindow` W, after W − 1 pops in a row from the highest level while lower
 * levels held live entries, the next pop takes the live entry that became ready first, whatever its level (the
 * oldest head of the FIFOs; O(levels)). Every push stamps the entry with a rising sequence number, so "first"
 * is the order in which entries became ready. Bound, for a waiting entry x: a fair pop takes an entry stamped
 * no later than x, and so does a pop from the highest level while x is in it (its FIFO head); a run of pops
 * that take none such is made only of highest-level pops while x waits below, each counted, so it is at most
 * W − 1 long; and the entries stamped before x only get fewer (a re-pushed entry gets a new stamp). So x is
 * popped within W·(N + 1) pops, N being the number of live entries when x was pushed — whatever is pushed
 * after it, at whatever priority.
 */
export class PriorityLevels<E extends { readonly priority: number; stamp: number }> {
  /** Non-empty levels, highest priority first. */
  private levels: Level<E>[] = [];
  private readonly byPriority = new Map<number, Level<E>>();
  private liveCount = 0;
  /**
   * One emptied level kept for the next new level: a queue that runs empty after every item (workers keep
   * up) would otherwise build a level and a FIFO per add. Not counted in {@link PriorityLevels.levelCount}.
   */
  private spare: Level<E> | undefined;
  /** The level pushed to last while it is in the list: most pushes go to one priority, without a look-up. */
  private recent: Level<E> | undefined;

  /** Stamp of the next pushed entry (its place in the order of becoming ready). */
  private nextStamp = 0;
  /** Pops in a row from the highest level while lower levels held live entries. */
  private bypassed = 0;

  /**
   * @param isLive - whether an entry met in a FIFO still belongs there.
   * @param fairnessWindow - W above (an integer >= 2), or `Infinity` for strict priority order.
   */
  constructor(
    private readonly isLive: (e: E) => boolean,
    private readonly fairnessWindow = Number.POSITIVE_INFINITY,
  ) {}

  /** Live entries over every level. */
  get size(): number {
    return this.liveCount;
  }

  /** FIFO slots in use, dead ones included (for leak checks). */
  get slots(): number {
    let n = 0;
    for (const l of this.levels) n += l.fifo.length;
    return n;
  }

  /** Levels held (for leak checks). */
  get levelCount(): number {
    return this.byPriority.size;
  }

  /** Appends `e` to the FIFO of its priority. */
  push(e: E): void {
    this.liveCount++;
    let level = this.recent;
    if (level === undefined || level.priority !== e.priority) level = this.byPriority.get(e.priority);
    if (level === undefined) {
      level = this.spare;
      if (level === undefined) level = { priority: e.priority, fifo: new Ring<E>(), live: 0 };
      else {
        this.spare = undefined;
        level.priority = e.priority;
      }
      this.byPriority.set(e.priority, level);
      const levels = this.levels;
      let i = levels.length;
      while (i > 0 && (levels[i - 1] as Level<E>).priority < e.priority) i--;
      levels.splice(i, 0, level);
    }
    this.recent = level;
    level.live++;
    e.stamp = this.nextStamp++;
    level.fifo.push(e);
  }

  /** An entry of `priority` stops being live where it is (its FIFO keeps it until popped past). */
  unlink(priority: number): void {
    this.liveCount--;
    (this.byPriority.get(priority) as Level<E>).live--;
  }

  /**
   * Removes and returns the first live entry of the highest level — or, when that level has been preferred
   * `fairnessWindow − 1` times in a row over waiting lower levels, the oldest live entry of any level —
   * dropping levels that run empty.
   */
  pop(): E | undefined {
    if (this.liveCount === 0) return undefined;
    let top = this.levels[0] as Level<E>;
    while (top.live === 0) {
      this.dropFirst();
      top = this.levels[0] as Level<E>;
    }
    if (this.liveCount === top.live) this.bypassed = 0;
    else if (this.bypassed >= this.fairnessWindow - 1) {
      this.bypassed = 0;
      return this.popOldest();
    } else this.bypassed++;
    for (;;) {
      const e = top.fifo.shift() as E;
      if (!this.isLive(e)) continue;
      top.live--;
      this.liveCount--;
      if (this.liveCount === 0)
        this.clear(); // every level left holds only dead entries
      else if (top.live === 0) this.dropFirst();
      return e;
    }
  }

  /** Removes and returns the live entry stamped first, over every level (there is one). */
  private popOldest(): E {
    let best: Level<E> | undefined;
    let bestAt = 0;
    let bestStamp = Number.POSITIVE_INFINITY;
    const levels = this.levels;
    for (let i = 0; i < levels.length; i++) {
      const level = levels[i] as Level<E>;
      if (level.live === 0) continue;
      let head = level.fifo.peek() as E;
      while (!this.isLive(head)) {
        level.fifo.shift();
        head = level.fifo.peek() as E;
      }
      if (head.stamp < bestStamp) {
        best = level;
        bestAt = i;
        bestStamp = head.stamp;
      }
    }
    const level = best as Level<E>;
    const e = level.fifo.shift() as E;
    level.live--;
    this.liveCount--;
    if (this.liveCount === 0)
      this.clear(); // every level left holds only dead entries
    else if (level.live === 0) {
      levels.splice(bestAt, 1);
      this.byPriority.delete(level.priority);
      this.retire(level);
    }
    return e;
  }

  clear(): void {
    for (const level of this.levels) this.retire(level);
    this.levels.length = 0;
    this.byPriority.clear();
    this.liveCount = 0;
  }

  private dropFirst(): void {
    const level = this.levels.shift() as Level<E>;
    this.byPriority.delete(level.priority);
    this.retire(level);
  }

  /** Keeps a level that left the list as the spare, emptied (its dead entries dropped), if none is kept. */
  private retire(level: Level<E>): void {
    if (this.recent === level) this.recent = undefined;
    if (this.spare !== undefined) return;
    level.fifo.clearKeepingCapacity();
    level.live = 0;
    this.spare = level;
  }
}
