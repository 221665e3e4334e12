import type { HandlerQueue } from '../handler.js';
import type { Logger } from '../logger.js';
import { type Reconciler, type Request, requestKey } from '../reconcile.js';
import type { ShardState } from './state.js';

/** What `Sharding.attach` returns. */
export interface ShardAttachment {
  /** The reconciler behind the hand-over gate. */
  readonly reconciler: Reconciler;
  /**
   * Whether a request made from an event may be queued (this replica owns its shard key). When not, the
   * request is remembered and enqueued at the first refresh that permits its key.
   */
  admit(req: Request): boolean;
  /** Stops enqueueing gained keys into the queue (the controller stopped). */
  detach(): void;
}

/** A request this replica passed over, and when (local ms). */
interface Dropped {
  readonly req: Request;
  readonly at: number;
  /** Order of recording, to tell entries recorded before a cache listing from those recorded during it. */
  readonly seq: number;
}

/** What an {@link Attachment} is made from. */
export interface AttachmentParts {
  readonly queue: HandlerQueue;
  /** The requests of the objects the controller is `for`, from its cache. */
  readonly list: () => Promise<readonly Request[]>;
  /** Whether the controller's sources have synced (keys are enqueued only then). */
  readonly synced: () => boolean;
  readonly shardKey: (req: Request) => string;
  /** At most this many passed-over requests are remembered; the oldest go first. */
  readonly limit: number;
  /** A passed-over request of a key another live member owns is kept at least this long, in ms. */
  readonly retentionMs: number;
  readonly log: Logger;
  /** Called for each remembered request the limit evicts (a metric). */
  readonly onEvict: () => void;
}

/**
 * One sharded controller (per cluster, for a multi-cluster one) as the shard sees it: the keys of its cache
 * permitted at the last refresh, and the requests this replica passed over — events the ownership filter
 * dropped (not owned, or fenced: then it owns nothing) and reconciles the gate refused. A refresh enqueues
 * the cache's keys that became permitted, which covers every object still cached; the remembered requests
 * cover the rest — above all deletions, whose objects are gone from the cache — and are enqueued at the
 * first refresh that permits their key.
 *
 * A remembered request of a key another member owns is forgotten once that member's Lease was seen changing
 * after the request was recorded (it was live then: it got the event itself, or dropped and remembered it)
 * and `retentionMs` passed (time for its queue to get there before the key might move here). So a deletion
 * whose event reached a replica while its owner was dead, partitioned or fenced is reconciled by whoever
 * owns the key next. Bounded: at most `limit` requests (the oldest go first, with a warning).
 */
export class Attachment {
  readonly queue: HandlerQueue;
  readonly #parts: AttachmentParts;
  /** Request keys permitted at the last refresh (those that become permitted are enqueued). */
  #permitted = new Set<string>();
  readonly #dropped = new Map<string, Dropped>();
  #seq = 0;
  #evicted = 0;

  constructor(parts: AttachmentParts) {
    this.queue = parts.queue;
    this.#parts = parts;
  }

  /** Requests remembered now. */
  get dropped(): number {
    return this.#dropped.size;
  }

  /** Remembered requests evicted by the limit since the start. */
  get evicted(): number {
    return this.#evicted;
  }

  /** Remembers `req`, passed over at `now` (local ms): an event dropped by the ownership filter or a refused reconcile. */
  drop(req: Request, now: number): void {
    const rk = requestKey(req);
    this.#dropped.delete(rk); // re-inserted last: the Map's order is the eviction order
    this.#dropped.set(rk, { req, at: now, seq: ++this.#seq });
    if (this.#dropped.size <= this.#parts.limit) return;
    const oldest = this.#dropped.keys().next().value as string;
    this.#dropped.delete(oldest);
    this.#parts.onEvict();
    if (this.#evicted++ === 0)
      this.#parts.log.warn(
        { limit: this.#parts.limit },
        'More requests passed over than the sharding remembers: the oldest are forgotten (a deletion among them may never be reconciled)',
      );
  }

  /** Forgets which keys were permitted, so that the next refresh enqueues every permitted key again. */
  forgetPermitted(): void {
    this.#permitted = new Set();
  }

  /**
   * Enqueues the keys that became permitted and the remembered requests of permitted keys; adds the shard
   * keys of cached objects this replica owns to `owned`. Does nothing before the controller synced.
   * @throws what listing the cache throws (then the next refresh enqueues every permitted key).
   */
  async refresh(s: ShardState, now: number, owned: Set<string>): Promise<void> {
    if (!this.#parts.synced()) return;
    const { shardKey, retentionMs } = this.#parts;
    const mark = this.#seq;
    let reqs: readonly Request[];
    try {
      reqs = await this.#parts.list();
    } catch (err) {
      this.#permitted = new Set();
      throw err;
    }
    const next = new Set<string>();
    for (const req of reqs) {
      const key = shardKey(req);
      const rk = requestKey(req);
      if (s.owns(key)) owned.add(key);
      if (!s.permitted(key)) {
        // Cached and not permitted: enqueued when it becomes permitted, so the entry is not needed — unless it
        // was recorded during the listing (the object may be gone since).
        const d = this.#dropped.get(rk);
        if (d && d.seq <= mark) this.#dropped.delete(rk);
        continue;
      }
      next.add(rk);
      if (!this.#permitted.has(rk)) this.queue.add(req);
    }
    for (const [rk, d] of this.#dropped) {
      const key = shardKey(d.req);
      if (s.permitted(key)) {
        this.#dropped.delete(rk);
        this.queue.add(d.req); // collapses with the same key enqueued above
      } else if (!s.owns(key) && now - d.at >= retentionMs && s.ownerSeenSince(key, d.at)) {
        this.#dropped.delete(rk);
      }
    }
    this.#permitted = next;
  }
}
