import { type ApiClient, type DeepReadonly, isNotFound, type Kind, type KubeObject } from '@kubeloop/client';
import { type Clock, onAbort, realClock } from '@kubeloop/core';
import type { ControllerBuilder } from '../builder.js';
import type { Controller } from '../controller.js';
import type { HandlerQueue } from '../handler.js';
import { LeaseKind, type LeaseObject, newLeaseClient } from '../leaderelection/resource-lock.js';
import type { Logger } from '../logger.js';
import type { Manager } from '../manager/interfaces.js';
import type { Runnable } from '../manager/runnable.js';
import { newPredicateFuncs, type Predicate } from '../predicate.js';
import { type Reconciler, type Request, requestKey } from '../reconcile.js';
import { Attachment, type ShardAttachment } from './attachment.js';
import { ShardingConfigError } from './errors.js';
import { memberRecord, SHARD_NAME_LABEL, writeMemberLease } from './member-lease.js';
import { type ShardMetrics, shardMetrics } from './metrics.js';
import { resolveShardingOptions, type ShardingOptions } from './options.js';
import { ShardState } from './state.js';

/**
 * Sharded active-active reconciling: every replica holds a member Lease, keys are spread over the live
 * members by rendezvous hashing, and a key moves only after its old owner acknowledged it drained (or its
 * Lease expired). A {@link Runnable} on every replica (not leader-only). Make one with {@link newSharding};
 * build each sharded controller with {@link Sharding.complete}.
 */
export class Sharding implements Runnable {
  readonly name: string;
  readonly namespace: string;
  readonly identity: string;
  readonly state: ShardState;
  readonly #mgr: Manager;
  readonly #client: ApiClient;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #shardKey: (req: Request) => string;
  readonly #leaseMs: number;
  readonly #retryMs: number;
  readonly #drainMs: number;
  readonly #maxDropped: number;
  readonly #metrics: ShardMetrics;
  readonly #attachments: Attachment[] = [];
  /** The member Lease as last read or written (undefined: read it again before the next write). */
  readonly #held: { lease?: LeaseObject } = {};
  #wake: (() => void) | undefined;
  #idle: Array<() => void> = [];
  #fenceTimer: { cancel(): void } | undefined;
  #drainTimer: { cancel(): void } | undefined;
  #started = false;

  constructor(mgr: Manager, options: ShardingOptions) {
    const { identity, leaseMs, renewMs, retryMs } = resolveShardingOptions(options);
    this.name = options.name;
    this.namespace = options.namespace;
    this.identity = identity;
    this.#mgr = mgr;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? mgr.getLogger()).child({ sharding: options.name, identity });
    this.#shardKey = options.shardKey ?? requestKey;
    this.#leaseMs = leaseMs;
    this.#retryMs = retryMs;
    this.#drainMs = options.drainTimeoutMs ?? 10_000;
    this.#maxDropped = options.maxDroppedRequests ?? 10_000;
    this.state = new ShardState(identity, this.#clock, {
      leaseDurationMs: leaseMs,
      renewDeadlineMs: renewMs,
    });
    this.#metrics = shardMetrics(options.metricsRegistry ?? mgr.getMetricsRegistry());
    // Own client: a hung Lease request must not eat the renew deadline (as the leader election lock does), and
    // no discovery request either (it does not fit in that timeout on a loaded server).
    this.#client = newLeaseClient(mgr.getConfig(), Math.max(500, Math.floor(renewMs / 2)));
  }

  /** Runs on every replica, not only the leader. */
  needLeaderElection(): boolean {
    return false;
  }

  /** The shard key of a request (the `shardKey` option, or `namespace/name`). */
  shardKey(req: Request): string {
    return this.#shardKey(req);
  }

  /**
   * Builds `builder`'s controller as a sharded one: calls `builder.for(kind, { predicates: [...predicates,
   * ownership filter] })` and `withOptions({ needLeaderElection: false })`, wraps `reconciler` in the
   * hand-over gate and attaches the controller, so that keys this replica gains are enqueued from the
   * cache. Call `for` only through here: the ownership filter drops the events of keys other members own,
   * and only the attachment brings them back when they move here (there is no standalone sharding
   * predicate, as a filter alone would drop them for good). @throws ControllerError as `builder.complete` does.
   */
  complete<T extends KubeObject>(
    builder: ControllerBuilder,
    kind: Kind<T>,
    reconciler: Reconciler,
    options: { predicates?: readonly Predicate<T>[] } = {},
  ): Controller {
    const slot: { att?: Attachment } = {};
    // The sharding predicate, remembering what it drops (see Attachment).
    const filter = newPredicateFuncs<T>((obj) => {
      const req = requestOf(obj);
      if (this.owns(req)) return true;
      slot.att?.drop(req, this.#clock.now());
      return false;
    });
    const ctrl = builder
      .for(kind, { predicates: [...(options.predicates ?? []), filter] })
      .withOptions({ needLeaderElection: false })
      .complete(this.#gate(reconciler, slot));
    const cache = this.#mgr.getCache();
    const att = this.#attachment(
      ctrl.handlerQueue,
      async () => (await cache.list(kind as unknown as Kind)).items.map(requestOf),
      () => ctrl.hasSynced(),
    );
    slot.att = att;
    this.#attachments.push(att);
    return ctrl;
  }

  /** Whether this replica owns `req`'s shard key under its current view (ownership, not yet permission). */
  owns(req: Request): boolean {
    return this.state.owns(this.#shardKey(req));
  }

  /**
   * Attaches a controller built elsewhere (a multi-cluster controller's per-cluster controller): `reconciler`
   * goes behind the hand-over gate, and keys this replica gains among `list()` are added to `queue` once
   * `synced()`. Filter the requests of events through {@link ShardAttachment.admit} before `queue`: it drops
   * those of keys this replica does not own and remembers them, so that a deletion whose event came while
   * this replica was fenced, or before its key moved here, is still enqueued once permitted (at most
   * `maxDroppedRequests` per attachment). Call `detach()` when the controller stops.
   */
  attach(
    queue: HandlerQueue,
    list: () => Promise<readonly Request[]>,
    synced: () => boolean,
    reconciler: Reconciler,
  ): ShardAttachment {
    const att = this.#attachment(queue, list, synced);
    this.#attachments.push(att);
    return {
      reconciler: this.#gate(reconciler, { att }),
      admit: (req) => {
        if (this.owns(req)) return true;
        att.drop(req, this.#clock.now());
        return false;
      },
      detach: () => {
        const i = this.#attachments.indexOf(att);
        if (i >= 0) this.#attachments.splice(i, 1);
      },
    };
  }

  #attachment(
    queue: HandlerQueue,
    list: () => Promise<readonly Request[]>,
    synced: () => boolean,
  ): Attachment {
    return new Attachment({
      queue,
      list,
      synced,
      shardKey: this.#shardKey,
      limit: this.#maxDropped,
      // Time for a live owner's queue to reach a key before the key may move here.
      retentionMs: 2 * this.#leaseMs,
      log: this.#log,
      onEvict: () => this.#metrics.evicted.inc({ name: this.name }),
    });
  }

  /** The reconciler behind the gate: refused requests are remembered; admitted ones run with an abortable signal. */
  #gate(inner: Reconciler, slot: { att?: Attachment }): Reconciler {
    return {
      reconcile: async (ctx, req) => {
        const key = this.#shardKey(req);
        const ac = this.state.begin(key);
        if (!ac) {
          // Not permitted (not yet handed over, fenced, or moved away): enqueued again once permitted here; a
          // key that moved on is the new owner's, which remembers the event if it dropped it (see Attachment).
          slot.att?.drop(req, this.#clock.now());
          return;
        }
        const off = onAbort(ctx.signal, () => ac.abort(ctx.signal.reason));
        try {
          return await inner.reconcile({ ...ctx, signal: ac.signal }, req);
        } finally {
          off();
          this.state.end(key, ac);
          if (this.state.inflight === 0) for (const f of this.#idle.splice(0)) f();
          if (this.state.draining()) this.#wake?.();
        }
      },
    };
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new ShardingConfigError(`sharding ${this.name} was already started`);
    this.#started = true;
    this.#log.info({ namespace: this.namespace }, 'Starting shard membership');
    try {
      while (!signal.aborted) {
        await this.#tick(signal);
        await this.#sleep(this.#retryMs, signal);
      }
    } finally {
      await this.#shutdown();
    }
  }

  #leaseName(): string {
    return `${this.name}-shard-${this.identity}`;
  }

  async #tick(signal: AbortSignal): Promise<void> {
    const s = this.state;
    if (s.checkFence()) this.#onFenced();
    const ack = s.ackToWrite();
    s.writeStarted(ack);
    const sentAt = this.#clock.now();
    try {
      await this.#writeLease(ack, signal);
      const changed = s.writeSucceeded(sentAt, ack);
      this.#armFenceTimer();
      if (changed && s.viewChangedAt !== undefined) {
        this.#metrics.handover.observe({ name: this.name }, (this.#clock.now() - s.viewChangedAt) / 1000);
        this.#log.info({ members: ack }, 'Acknowledged membership (drained)');
      }
    } catch (err) {
      s.writeFailed();
      // A write cut short by the stop leaves the Lease ours: #shutdown still releases it (forgetting it here
      // skipped the release and left the Lease to expire).
      if (signal.aborted) return;
      this.#held.lease = undefined;
      this.#log.warn({ err }, 'Renewing the member Lease failed');
    }
    if (s.checkFence()) this.#onFenced();
    let viewChanged: boolean;
    try {
      const list = await this.#client.list(LeaseKind, {
        namespace: this.namespace,
        labelSelector: { [SHARD_NAME_LABEL]: this.name },
        signal,
      });
      viewChanged = s.observeMembers(list.items.map(memberRecord)).viewChanged;
    } catch (err) {
      if (signal.aborted) return;
      this.#log.warn({ err }, 'Listing the member Leases failed');
      viewChanged = s.expire().viewChanged;
    }
    if (viewChanged) {
      this.#log.info({ members: s.view }, 'Membership changed');
      this.#drainTimer?.cancel();
      this.#drainTimer = this.#clock.setTimer(() => {
        const n = s.abortLost();
        if (n > 0)
          this.#log.warn({ aborted: n }, 'Drain deadline passed: aborted reconciles of keys that moved');
      }, this.#drainMs);
      if (!s.draining()) this.#wake?.();
    }
    // A drained view is acknowledged at once rather than a retry period later.
    if (s.draining() && s.ackToWrite() !== s.acked) this.#wakeSoon = true;
    this.#metrics.members.set({ name: this.name }, s.view.length);
    await this.#refreshKeys();
  }

  #wakeSoon = false;

  #onFenced(): void {
    // While fenced this replica owns nothing, so the ownership filter drops the events of its keys: forget
    // which keys were permitted, so that the next refresh enqueues every permitted key again. (The fence timer
    // can fire and a renew in flight succeed between two refreshes, which then saw the keys permitted before
    // and after, and the changes made meanwhile were never reconciled.)
    for (const att of this.#attachments) att.forgetPermitted();
    this.#log.error({}, 'Member Lease not renewed within the renew deadline: stopped reconciling');
  }

  #armFenceTimer(): void {
    this.#fenceTimer?.cancel();
    const s = this.state;
    this.#fenceTimer = this.#clock.setTimer(() => {
      if (!s.fenced && s.checkFence()) this.#onFenced();
    }, s.fenceAt() - this.#clock.now());
  }

  async #writeLease(ack: readonly string[] | undefined, signal: AbortSignal): Promise<void> {
    await writeMemberLease(this.#client, this.#held, {
      namespace: this.namespace,
      name: this.#leaseName(),
      group: this.name,
      identity: this.identity,
      leaseMs: this.#leaseMs,
      ack,
      signal,
    });
  }

  async #refreshKeys(): Promise<void> {
    const owned = new Set<string>();
    let dropped = 0;
    for (const att of [...this.#attachments]) {
      try {
        await att.refresh(this.state, this.#clock.now(), owned);
      } catch (err) {
        this.#log.warn({ err }, 'Listing cached objects for the shard failed');
      }
      dropped += att.dropped;
    }
    this.#metrics.owned.set({ name: this.name }, owned.size);
    this.#metrics.dropped.set({ name: this.name }, dropped);
  }

  async #sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    if (this.#wakeSoon) {
      this.#wakeSoon = false;
      return;
    }
    await new Promise<void>((resolve) => {
      // Through the client's per-signal fan-out: the manager's stop signal is shared by many components.
      let off: () => void = () => {};
      const done = () => {
        t.cancel();
        off();
        this.#wake = undefined;
        resolve();
      };
      const t = this.#clock.setTimer(done, ms);
      off = onAbort(signal, done);
      this.#wake = done;
    });
  }

  async #shutdown(): Promise<void> {
    const s = this.state;
    s.stop();
    this.#drainTimer?.cancel();
    if (s.inflight > 0) {
      await new Promise<void>((resolve) => {
        const t = this.#clock.setTimer(resolve, this.#drainMs);
        this.#idle.push(() => {
          t.cancel();
          resolve();
        });
      });
    }
    this.#fenceTimer?.cancel();
    // Release: with nothing running, the Lease goes, so the others take over at once instead of after expiry.
    if (s.inflight === 0 && this.#held.lease) {
      const ac = new AbortController();
      const t = this.#clock.setTimer(() => ac.abort(), this.#retryMs);
      try {
        await this.#client.delete(
          LeaseKind,
          { namespace: this.namespace, name: this.#leaseName() },
          { signal: ac.signal },
        );
        this.#log.info({}, 'Released the member Lease');
      } catch (err) {
        if (!isNotFound(err)) this.#log.warn({ err }, 'Releasing the member Lease failed; it will expire');
      } finally {
        t.cancel();
      }
    }
    this.#metrics.members.set({ name: this.name }, 0);
    this.#metrics.owned.set({ name: this.name }, 0);
    await this.#client.close();
  }
}

function requestOf(obj: DeepReadonly<KubeObject>): Request {
  return { namespace: obj.metadata?.namespace ?? '', name: obj.metadata?.name ?? '' };
}

/**
 * Makes a sharding group member for `mgr` and adds it to the manager (it runs on every replica). Then
 * build controllers with `sharding.complete(newControllerManagedBy(mgr), Kind, reconciler)`.
 * @throws ShardingConfigError for an empty name or namespace, a bad identity, or timings not ordered
 *   `leaseDurationMs > renewDeadlineMs > retryPeriodMs > 0`.
 */
export function newSharding(mgr: Manager, options: ShardingOptions): Sharding {
  const s = new Sharding(mgr, options);
  mgr.add(s);
  return s;
}
