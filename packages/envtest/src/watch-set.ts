/** The set of open watch streams (the server's handle to end them). */

/** Live watches, so the server can end them all (restart, stop) or those of one resource (CRD deleted). */
export class WatchSet {
  readonly #active = new Map<(ended?: boolean) => void, string | undefined>();
  /**
   * Register a watch's stop function (called with `true` when the stream should end cleanly because its
   * resource is gone), optionally under its storage key; returns the unregister function.
   */
  add(stop: (ended?: boolean) => void, storageKey?: string): () => void {
    this.#active.set(stop, storageKey);
    return () => this.#active.delete(stop);
  }
  get size(): number {
    return this.#active.size;
  }
  stopAll(): void {
    for (const s of [...this.#active.keys()]) s();
    this.#active.clear();
  }
  /** End every watch on one storage key (its resource stopped being served). */
  stopFor(storageKey: string): void {
    for (const [s, key] of [...this.#active]) if (key === storageKey) s(true);
  }
}
