/** Entry of an {@link IndexedHeap}; `index` is maintained by the heap (-1 when not in it). */
export interface HeapEntry {
  index: number;
}

/**
 * A binary min-heap whose entries know their position, so an entry's priority can be changed in O(log n)
 * (client-go's `waitForPriorityQueue` with `heap.Fix`).
 */
export class IndexedHeap<E extends HeapEntry> {
  private readonly items: E[] = [];

  /** @param less - strict ordering: `true` if `a` must come out before `b`. */
  constructor(private readonly less: (a: E, b: E) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): E | undefined {
    return this.items[0];
  }

  push(e: E): void {
    e.index = this.items.length;
    this.items.push(e);
    this.up(e.index);
  }

  pop(): E | undefined {
    const items = this.items;
    const top = items[0];
    if (top === undefined) return undefined;
    const last = items.pop() as E;
    if (items.length > 0) {
      items[0] = last;
      last.index = 0;
      this.down(0);
    }
    top.index = -1;
    return top;
  }

  /** Removes `e` from anywhere in the heap. */
  remove(e: E): void {
    const i = e.index;
    if (i < 0 || this.items[i] !== e) return;
    const last = this.items.pop() as E;
    if (i < this.items.length) {
      this.items[i] = last;
      last.index = i;
      this.fix(i);
    }
    e.index = -1;
  }

  /** Restores heap order after `e`'s ordering key changed. */
  fix(i: number): void {
    if (!this.up(i)) this.down(i);
  }

  clear(): void {
    for (const e of this.items) e.index = -1;
    this.items.length = 0;
  }

  private up(i: number): boolean {
    const items = this.items;
    const e = items[i] as E;
    const start = i;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const pe = items[p] as E;
      if (!this.less(e, pe)) break;
      items[i] = pe;
      pe.index = i;
      i = p;
    }
    items[i] = e;
    e.index = i;
    return i !== start;
  }

  private down(i: number): void {
    const items = this.items;
    const n = items.length;
    const e = items[i] as E;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      if (r < n && this.less(items[r] as E, items[l] as E)) c = r;
      const ce = items[c] as E;
      if (!this.less(ce, e)) break;
      items[i] = ce;
      ce.index = i;
      i = c;
    }
    items[i] = e;
    e.index = i;
  }
}
