import type { Clock } from '@kubeloop/core';
import { rendezvousOwner } from './hash.js';

/** What a replica reads from one member Lease. */
export interface MemberRecord {
  /** The member's identity (`spec.holderIdentity`). */
  readonly identity: string;
  /** Changes on every write of the Lease (its `metadata.resourceVersion`); liveness is judged by it changing. */
  readonly version: string;
  /**
   * The member set the member has drained for (its acknowledgement), or `undefined` when it has not
   * acknowledged any yet (then it reconciles nothing). The member claims exactly the keys it owns under it.
   */
  readonly drainedFor: readonly string[] | undefined;
}

interface Observed {
  record: MemberRecord;
  /** Local clock (ms) when `version` was first seen. */
  seenAt: number;
}

/** Timings of a {@link ShardState}, in ms. */
export interface ShardTimings {
  /** How long a member Lease stays live after it was last seen changing. */
  readonly leaseDurationMs: number;
  /** A replica that has not renewed its own Lease for this long stops reconciling (fences itself); < `leaseDurationMs`. */
  readonly renewDeadlineMs: number;
}

function sameMembers(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((m, i) => m === b[i]);
}

/**
 * The hand-over state machine of one replica, without I/O (the {@link Sharding} runnable drives it; unit
 * tests drive it with a FakeClock). Its invariant: every key this replica reconciles is claimed by the
 * acknowledgement published on its member Lease, and was started only after a read — made after that
 * acknowledgement was written — showed no live member claiming it. See the README's "Sharding" section for
 * the protocol and the timing argument.
 */
export class ShardState {
  readonly self: string;
  readonly #clock: Clock;
  readonly #t: ShardTimings;
  readonly #members = new Map<string, Observed>();
  #view: readonly string[] = [];
  #acked: readonly string[] | undefined;
  /** Acknowledgements whose write failed with an unknown outcome: the server may hold any of them. */
  #uncertain: Array<readonly string[]> = [];
  #writing: readonly string[] | undefined;
  #fresh = false;
  #fenced = true;
  #stopping = false;
  #lastRenewSentAt = Number.NEGATIVE_INFINITY;
  #viewChangedAt: number | undefined;
  readonly #inflight = new Map<string, Set<AbortController>>();

  constructor(self: string, clock: Clock, timings: ShardTimings) {
    this.self = self;
    this.#clock = clock;
    this.#t = timings;
  }

  /** The current member set (sorted; includes this replica unless fenced or stopping). */
  get view(): readonly string[] {
    return this.#view;
  }
  /** The member set last acknowledged on this replica's Lease, or `undefined` before the first. */
  get acked(): readonly string[] | undefined {
    return this.#acked;
  }
  get fenced(): boolean {
    return this.#fenced;
  }
  /** Reconciles running now, over all keys. */
  get inflight(): number {
    let n = 0;
    for (const s of this.#inflight.values()) n += s.size;
    return n;
  }

  /** Members other than this replica whose Lease was seen changing less than a lease duration ago. */
  liveOthers(): MemberRecord[] {
    const now = this.#clock.now();
    const out: MemberRecord[] = [];
    for (const o of this.#members.values()) {
      if (now - o.seenAt < this.#t.leaseDurationMs) out.push(o.record);
    }
    return out;
  }

  /**
   * A fresh list of the member Leases, read after this replica's last successful Lease write. Records the
   * local time each member's version was first seen (expiry is judged on this clock, as leader election
   * does), then recomputes the view. Returns the time the view changed, if it did.
   */
  observeMembers(records: readonly MemberRecord[]): { viewChanged: boolean } {
    const now = this.#clock.now();
    const seen = new Set<string>();
    for (const r of records) {
      if (r.identity === this.self || r.identity === '') continue;
      seen.add(r.identity);
      const o = this.#members.get(r.identity);
      if (!o || o.record.version !== r.version) this.#members.set(r.identity, { record: r, seenAt: now });
      else o.record = r;
    }
    // A Lease that is gone was released (its holder drained first) or deleted: no longer a member.
    for (const id of [...this.#members.keys()]) if (!seen.has(id)) this.#members.delete(id);
    if (!this.#fenced) this.#fresh = true;
    return { viewChanged: this.#recomputeView() };
  }

  /** Recomputes the view from the live members (call on each tick: members expire with time). */
  #recomputeView(): boolean {
    const next =
      this.#fenced || this.#stopping ? [] : [this.self, ...this.liveOthers().map((r) => r.identity)].sort();
    if (sameMembers(next, this.#view)) return false;
    this.#view = next;
    this.#viewChangedAt = this.#clock.now();
    return true;
  }

  /** Re-evaluates expiry without a new read (e.g. while lists fail). */
  expire(): { viewChanged: boolean } {
    return { viewChanged: this.#recomputeView() };
  }

  /** When the view last changed (local ms), for the hand-over metric. */
  get viewChangedAt(): number | undefined {
    return this.#viewChangedAt;
  }

  /** Whether this replica owns `key` under its current view (ownership, not yet permission). */
  owns(key: string): boolean {
    return rendezvousOwner(key, this.#view) === this.self;
  }

  /**
   * Whether `key`'s owner under the view is another member whose Lease was first seen at its current version
   * after `t` (local ms): it renewed after `t`, so it was live then.
   */
  ownerSeenSince(key: string, t: number): boolean {
    const owner = rendezvousOwner(key, this.#view);
    if (owner === undefined || owner === this.self) return false;
    const o = this.#members.get(owner);
    return o !== undefined && o.seenAt > t;
  }

  /** Whether this replica's published claim covers `key` (every acknowledgement the server may hold). */
  #claims(key: string): boolean {
    if (!this.#acked || rendezvousOwner(key, this.#acked) !== this.self) return false;
    if (this.#writing && rendezvousOwner(key, this.#writing) !== this.self) return false;
    for (const u of this.#uncertain) if (rendezvousOwner(key, u) !== this.self) return false;
    return true;
  }

  /**
   * Whether a reconcile of `key` may start now: not fenced or stopping; a read since the last
   * acknowledgement; owned under the view; claimed by the published acknowledgement; and no live member
   * claims it under its own acknowledgement.
   */
  permitted(key: string): boolean {
    if (this.#fenced || this.#stopping || !this.#fresh) return false;
    // Past the renew deadline even if the fence timer has not fired yet (a busy event loop).
    if (this.#clock.now() >= this.fenceAt()) return false;
    if (!this.owns(key) || !this.#claims(key)) return false;
    for (const m of this.liveOthers()) {
      if (m.drainedFor && rendezvousOwner(key, m.drainedFor) === m.identity) return false;
    }
    return true;
  }

  /**
   * The acknowledgement to write next: the view once no reconcile of a key this replica no longer owns
   * is running (drained), else the current acknowledgement (nothing new to acknowledge yet).
   */
  ackToWrite(): readonly string[] | undefined {
    if (this.#view.length === 0 || sameMembers(this.#view, this.#acked)) return this.#acked;
    for (const key of this.#inflight.keys()) if (!this.owns(key)) return this.#acked;
    return this.#view;
  }

  /** Whether a changed acknowledgement is waiting for in-flight reconciles of lost keys. */
  draining(): boolean {
    return this.#view.length > 0 && !sameMembers(this.#view, this.#acked);
  }

  /** A Lease write carrying `ack` is being sent (from now on the gate honours it too). */
  writeStarted(ack: readonly string[] | undefined): void {
    this.#writing = sameMembers(ack, this.#acked) ? undefined : ack;
  }

  /**
   * The write sent at `sentAt` (local ms) succeeded: the acknowledgement it carried is now the published
   * one, the renew deadline restarts from `sentAt`. Returns whether the acknowledgement changed.
   */
  writeSucceeded(sentAt: number, ack: readonly string[] | undefined): boolean {
    const changed = !sameMembers(ack, this.#acked);
    this.#acked = ack;
    this.#writing = undefined;
    this.#uncertain = [];
    if (sentAt > this.#lastRenewSentAt) this.#lastRenewSentAt = sentAt;
    if (changed) this.#fresh = false; // others must be read again after the new claim is visible
    if (this.#fenced && !this.#stopping) {
      this.#fenced = false;
      this.#fresh = false;
    }
    return changed;
  }

  /** The write failed: it may or may not have reached the server. */
  writeFailed(): void {
    if (this.#writing) this.#uncertain.push(this.#writing);
    this.#writing = undefined;
  }

  /** Local ms when this replica must fence itself unless a renew succeeds first. */
  fenceAt(): number {
    return this.#lastRenewSentAt + this.#t.renewDeadlineMs;
  }

  /**
   * Fences this replica when its last successful renew was sent more than the renew deadline ago: no
   * reconcile starts and every running one is aborted, well before others judge the Lease expired.
   * Returns whether it is fenced.
   */
  checkFence(): boolean {
    if (!this.#fenced && this.#clock.now() >= this.fenceAt()) this.fence();
    return this.#fenced;
  }

  /** Stops all work at once (renew deadline passed). */
  fence(): void {
    this.#fenced = true;
    this.#fresh = false;
    this.#recomputeView();
    this.#abortWhere(() => true);
  }

  /** The replica is stopping: no reconcile starts any more; running ones finish (the controller aborts them). */
  stop(): void {
    this.#stopping = true;
    this.#recomputeView();
  }

  /** Aborts the running reconciles of keys this replica no longer owns (the drain deadline passed). */
  abortLost(): number {
    return this.#abortWhere((key) => !this.owns(key));
  }

  #abortWhere(pred: (key: string) => boolean): number {
    let n = 0;
    for (const [key, set] of this.#inflight) {
      if (!pred(key)) continue;
      for (const ac of set) {
        if (!ac.signal.aborted) {
          ac.abort(new Error(`shard hand-over: key ${key} moved away from ${this.self}`));
          n++;
        }
      }
    }
    return n;
  }

  /** Starts a reconcile of `key` if {@link permitted}; returns its abort controller, or `undefined` when refused. */
  begin(key: string): AbortController | undefined {
    if (!this.permitted(key)) return undefined;
    const ac = new AbortController();
    let set = this.#inflight.get(key);
    if (!set) {
      set = new Set();
      this.#inflight.set(key, set);
    }
    set.add(ac);
    return ac;
  }

  /** A reconcile begun by {@link begin} returned. */
  end(key: string, ac: AbortController): void {
    const set = this.#inflight.get(key);
    if (!set) return;
    set.delete(ac);
    if (set.size === 0) this.#inflight.delete(key);
  }
}
