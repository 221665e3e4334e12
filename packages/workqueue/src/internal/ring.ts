/** A growable ring buffer FIFO (amortised O(1) push and shift, no `Array#shift` copying). */
export class Ring<T> {
  private buf: (T | undefined)[];
  private head = 0;
  private size = 0;
  private mask: number;

  constructor(initialCapacity = 16) {
    let cap = 16;
    while (cap < initialCapacity) cap *= 2;
    this.buf = new Array<T | undefined>(cap);
    this.mask = cap - 1;
  }

  get length(): number {
    return this.size;
  }

  /** Allocated slots (for leak checks). */
  get capacity(): number {
    return this.buf.length;
  }

  push(value: T): void {
    if (this.size === this.buf.length) this.grow();
    this.buf[(this.head + this.size) & this.mask] = value;
    this.size++;
  }

  /** The oldest value without removing it; `undefined` when empty. */
  peek(): T | undefined {
    return this.size === 0 ? undefined : this.buf[this.head];
  }

  /** Removes and returns the oldest value; `undefined` when empty. */
  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const v = this.buf[this.head];
    this.buf[this.head] = undefined;
    this.head = (this.head + 1) & this.mask;
    this.size--;
    // give back the memory of a past burst once it has drained
    if (this.size === 0 && this.buf.length > 4096) this.clear();
    return v;
  }

  /** Empties the buffer; keeps its slots unless they are many (then as {@link Ring.clear}). */
  clearKeepingCapacity(): void {
    if (this.buf.length > 4096) {
      this.clear();
      return;
    }
    for (let i = 0; i < this.size; i++) this.buf[(this.head + i) & this.mask] = undefined;
    this.head = 0;
    this.size = 0;
  }

  clear(): void {
    this.buf = new Array<T | undefined>(16);
    this.mask = 15;
    this.head = 0;
    this.size = 0;
  }

  private grow(): void {
    const old = this.buf;
    const cap = old.length * 2;
    const next = new Array<T | undefined>(cap);
    for (let i = 0; i < this.size; i++) next[i] = old[(this.head + i) & this.mask];
    this.buf = next;
    this.head = 0;
    this.mask = cap - 1;
  }
}
