/**
 * Read-your-own-writes for an informer cache: the resourceVersions a client's writes returned, per object, and
 * waits (no polling, bounded) until the informer that serves reads of that object has stored that version.
 */
import type { KubeObject } from '@kubeloop/client';
import { type Clock, onAbort, realClock } from '@kubeloop/core';

/** Options of read-your-own-writes (`InformerCacheOptions.readYourWrites`). */
export interface ReadYourWritesOptions {
  /**
   * Longest wait of one read (or of one reconcile start) for the informer to store a version this process
   * wrote, in ms; past it the read goes on with what the cache holds (counted as a timeout). @defaultValue 5000
   */
  readonly timeoutMs?: number;
}

/** The counters of a {@link ReadYourWrites} tracker (exported as metrics by the manager). */
export interface ReadYourWritesStats {
  /** Writes whose resourceVersion is being tracked now (not yet seen by the informer). */
  readonly pending: number;
  /** Reads (and reconcile starts) that had to wait, by how the wait ended. */
  readonly waits: { readonly observed: number; readonly timeout: number; readonly aborted: number };
  /** Seconds spent waiting, summed over every wait. */
  readonly waitSeconds: number;
}

interface Expectation {
  readonly resourceVersion: string;
  readonly uid: string | undefined;
  /** `clock.now()` when recorded: past `timeoutMs` it no longer holds a read back. */
  readonly at: number;
  readonly waiters: Set<() => void>;
}

/** What an informer stored for one key, during writes in flight (see {@link ReadYourWrites.beginWrite}). */
type Seen = Map<string, Set<string>>;

/** The default bound of one wait, in ms. */
export const DEFAULT_READ_YOUR_WRITES_TIMEOUT_MS = 5000;

/**
 * Tracks this process's writes by kind and object key, and lets reads wait until the cache has caught up
 * with them. Follows the design controller-runtime has for stale reads after a controller's own write
 * (its read-your-writes proposal; client-go 1.36 exposes the store's last synced resourceVersion for it), but
 * compares only what the API server promises about resourceVersions: they are opaque, so a write is seen when
 * the informer stores **exactly** the version the write returned, or deletes the object with the same uid
 * (every later state of that object comes after it). "Newer than" is never computed; a version the informer
 * never delivers as an event (a relist jumped past it, a later write replaced it before the watch sent it)
 * ends the wait at the bound instead, counted as a timeout. Deletes are not tracked: a delete returns no
 * resourceVersion to wait for.
 *
 * Writes resolve after their event may already have reached the informer: {@link beginWrite} opens a window
 * in which every stored version of the kind is remembered, so such a write counts as seen at once.
 */
export class ReadYourWrites {
  readonly #timeoutMs: number;
  readonly #clock: Clock;
  /** kind key → object key → the last write's expectation. */
  readonly #pending = new Map<string, Map<string, Expectation>>();
  /** kind key → writes in flight and what was stored meanwhile. */
  readonly #inFlight = new Map<string, { count: number; seen: Seen }>();
  #size = 0;
  #observed = 0;
  #timeouts = 0;
  #aborted = 0;
  #waitMs = 0;

  /** @throws RangeError for a `timeoutMs` that is not a finite number >= 0. */
  constructor(options: ReadYourWritesOptions & { readonly clock?: Clock } = {}) {
    const t = options.timeoutMs ?? DEFAULT_READ_YOUR_WRITES_TIMEOUT_MS;
    if (typeof t !== 'number' || !Number.isFinite(t) || t < 0)
      throw new RangeError(`readYourWrites.timeoutMs must be a finite number of ms >= 0, got ${String(t)}`);
    this.#timeoutMs = t;
    this.#clock = options.clock ?? realClock;
  }

  /** Counters for metrics. */
  stats(): ReadYourWritesStats {
    return {
      pending: this.#size,
      waits: { observed: this.#observed, timeout: this.#timeouts, aborted: this.#aborted },
      waitSeconds: this.#waitMs / 1000,
    };
  }

  /**
   * Marks a write of `kind` as in flight; call the returned function with the object the server returned
   * (or with nothing when the write failed). `current` answers what the informer stores for a key now.
   */
  beginWrite(kind: string, current: (key: string) => KubeObject | undefined): (written?: KubeObject) => void {
    let flight = this.#inFlight.get(kind);
    if (!flight) {
      flight = { count: 0, seen: new Map() };
      this.#inFlight.set(kind, flight);
    }
    flight.count++;
    const f = flight;
    let ended = false;
    return (written) => {
      if (ended) return;
      ended = true;
      const rv = written?.metadata?.resourceVersion;
      const name = written?.metadata?.name;
      if (rv && name) {
        const ns = written.metadata?.namespace;
        const key = ns ? `${ns}/${name}` : name;
        const already = f.seen.get(key)?.has(rv) || current(key)?.metadata?.resourceVersion === rv;
        if (!already) this.#expect(kind, key, rv, written.metadata?.uid);
        else this.#settle(kind, key);
      }
      if (--f.count === 0) this.#inFlight.delete(kind);
    };
  }

  #expect(kind: string, key: string, resourceVersion: string, uid: string | undefined): void {
    let byKey = this.#pending.get(kind);
    if (!byKey) {
      byKey = new Map();
      this.#pending.set(kind, byKey);
    }
    const prev = byKey.get(key);
    // A later write replaces the earlier one: its waiters now wait for the newer version.
    if (!prev) this.#size++;
    byKey.set(key, { resourceVersion, uid, at: this.#clock.now(), waiters: prev?.waiters ?? new Set() });
    if (this.#size > 1024) this.#sweep();
  }

  /** Drops expectations older than the bound that nobody waits for (a write never read again). */
  #sweep(): void {
    const old = this.#clock.now() - this.#timeoutMs;
    for (const [kind, byKey] of this.#pending) {
      for (const [key, e] of byKey) {
        if (e.at <= old && e.waiters.size === 0) {
          byKey.delete(key);
          this.#size--;
        }
      }
      if (byKey.size === 0) this.#pending.delete(kind);
    }
  }

  /**
   * What an informer of `kind` stored (or removed) for `key`: called for every add, update, delete and every
   * object of a relist. Cheap when nothing is pending (two map lookups).
   */
  observe(kind: string, key: string, obj: KubeObject | undefined, deleted: boolean): void {
    const rv = obj?.metadata?.resourceVersion;
    const flight = this.#inFlight.get(kind);
    if (flight && rv) {
      let set = flight.seen.get(key);
      if (!set) {
        set = new Set();
        flight.seen.set(key, set);
      }
      set.add(rv);
    }
    const e = this.#pending.get(kind)?.get(key);
    if (!e) return;
    if (rv === e.resourceVersion || (deleted && (e.uid === undefined || obj?.metadata?.uid === e.uid)))
      this.#settle(kind, key);
  }

  #settle(kind: string, key: string): void {
    const byKey = this.#pending.get(kind);
    const e = byKey?.get(key);
    if (!byKey || !e) return;
    byKey.delete(key);
    if (byKey.size === 0) this.#pending.delete(kind);
    this.#size--;
    for (const w of e.waiters) w();
  }

  /** Whether anything of `kind` (in `namespace`, if given) is pending. */
  hasPending(kind: string, key?: string): boolean {
    const byKey = this.#pending.get(kind);
    if (!byKey) return false;
    return key === undefined ? byKey.size > 0 : byKey.has(key);
  }

  /**
   * Resolves once the informer of `kind` has stored this process's last write of `key` (`namespace/name`, or
   * `name`), at once when none is pending, or after the bound (counted as a timeout; the read then goes on).
   * Never rejects: an aborted `signal` ends the wait too.
   */
  waitForKey(kind: string, key: string, signal?: AbortSignal): Promise<void> {
    const e = this.#pending.get(kind)?.get(key);
    if (!e) return Promise.resolve();
    return this.#wait([e], signal);
  }

  /**
   * Resolves once the informer of `kind` has stored every write of this process to objects in `namespace`
   * (every namespace when `undefined` or `''`), with the same bound as {@link waitForKey}: a list after a
   * create sees the created object.
   */
  waitForKind(kind: string, namespace: string | undefined, signal?: AbortSignal): Promise<void> {
    const byKey = this.#pending.get(kind);
    if (!byKey) return Promise.resolve();
    const prefix = namespace ? `${namespace}/` : undefined;
    const es: Expectation[] = [];
    for (const [key, e] of byKey) if (!prefix || key.startsWith(prefix)) es.push(e);
    if (es.length === 0) return Promise.resolve();
    return this.#wait(es, signal);
  }

  #wait(es: readonly Expectation[], signal: AbortSignal | undefined): Promise<void> {
    const now = this.#clock.now();
    // Only expectations still within their bound hold a read back; the wait ends at the youngest one's.
    const live = es.filter((e) => now - e.at < this.#timeoutMs);
    if (live.length === 0) return Promise.resolve();
    if (signal?.aborted) {
      this.#aborted++;
      return Promise.resolve();
    }
    const until = Math.max(...live.map((e) => e.at)) + this.#timeoutMs;
    return new Promise<void>((resolve) => {
      let left = live.length;
      let done = false;
      const finish = (how: 'observed' | 'timeout' | 'aborted') => {
        if (done) return;
        done = true;
        timer.cancel();
        off();
        for (const e of live) e.waiters.delete(onSeen);
        this.#waitMs += this.#clock.now() - now;
        if (how === 'observed') this.#observed++;
        else if (how === 'timeout') this.#timeouts++;
        else this.#aborted++;
        resolve();
      };
      const onSeen = () => {
        if (--left === 0) finish('observed');
      };
      for (const e of live) e.waiters.add(onSeen);
      const timer = this.#clock.setTimer(() => finish('timeout'), until - now);
      const off = signal ? onAbort(signal, () => finish('aborted')) : () => {};
    });
  }
}
