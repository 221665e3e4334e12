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
import { ShardingConfigError } from './errors.js';
import { memberRecord, SHARD_NAME_LABEL, writeMemberLease } from './member-lease.js';
import { type ShardMetrics, shardMetrics } from './metrics.js';
import { resolveShardingOptions, type ShardingOptions } from './options.js';
import { ShardState } from './state.js';

interface Attachment {
  readonly queue: HandlerQueue;
  /** The requests of the objects the controller is `for`, from its cache. */
  readonly list: () => Promise<readonly Request[]>;
  /** Whether the controller's sources have synced (keys are enqueued only then). */
  readonly synced: () => boolean;
  permitted: Set<string>;
  readonly deferred: Map<string, Request>;
}

/** What {@link Sharding.attach} returns. */
export interface ShardAttachment {
  /** The reconciler behind the hand-over gate. */
  readonly reconciler: Reconciler;
  /** Stops enqueueing gained keys into the queue (the controller stopped). */
  detach(): void;
}

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

  /** A predicate that passes only events of objects whose key this replica owns under its current view. */
  predicate<T extends KubeObject = KubeObject>(): Predicate<T> {
    return newPredicateFuncs<T>((obj) =>
      this.state.owns(
        this.#shardKey({ namespace: obj.metadata?.namespace ?? '', name: obj.metadata?.name ?? '' }),
      ),
    );
  }

  /**
   * Builds `builder`'s controller as a sharded one: calls `builder.for(kind, { predicates: [...predicates,
   * this.predicate()] })` and `withOptions({ needLeaderElection: false })`, wraps `reconciler` in the
   * hand-over gate and attaches the controller, so that keys this replica gains are enqueued from the
   * cache. Call `for` only through here. @throws ControllerError as `builder.complete` does.
   */
  complete<T extends KubeObject>(
    builder: ControllerBuilder,
    kind: Kind<T>,
    reconciler: Reconciler,
    options: { predicates?: readonly Predicate<T>[] } = {},
  ): Controller {
    const slot: { att?: Attachment } = {};
    const ctrl = builder
      .for(kind, { predicates: [...(options.predicates ?? []), this.predicate<T>()] })
      .withOptions({ needLeaderElection: false })
      .complete(this.#gate(reconciler, slot));
    const cache = this.#mgr.getCache();
    const att: Attachment = {
      queue: ctrl.handlerQueue,
      list: async () => (await cache.list(kind as unknown as Kind)).items.map(requestOf),
      synced: () => ctrl.hasSynced(),
      permitted: new Set(),
      deferred: new Map(),
    };
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
   * `synced()`. Requests whose key this replica does not own should be filtered before `queue` (see
   * {@link Sharding.owns}). Call `detach()` when the controller stops.
   */
  attach(
    queue: HandlerQueue,
    list: () => Promise<readonly Request[]>,
    synced: () => boolean,
    reconciler: Reconciler,
  ): ShardAttachment {
    const att: Attachment = { queue, list, synced, permitted: new Set(), deferred: new Map() };
    this.#attachments.push(att);
    return {
      reconciler: this.#gate(reconciler, { att }),
      detach: () => {
        const i = this.#attachments.indexOf(att);
        if (i >= 0) this.#attachments.splice(i, 1);
      },
    };
  }

  /** The reconciler behind the gate: refused keys are deferred; admitted ones run with an abortable signal. */
  #gate(inner: Reconciler, slot: { att?: Attachment }): Reconciler {
    return {
      reconcile: async (ctx, req) => {
        const key = this.#shardKey(req);
        const ac = this.state.begin(key);
        if (!ac) {
          // Owned but not yet handed over (or not owned): come back when permitted; the owner does otherwise.
          if (this.state.owns(key) && slot.att) slot.att.deferred.set(requestKey(req), req);
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
    for (const att of this.#attachments) att.permitted = new Set();
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
    const s = this.state;
    const owned = new Set<string>();
    for (const att of this.#attachments) {
      if (!att.synced()) continue;
      let reqs: readonly Request[];
      try {
        reqs = await att.list();
      } catch (err) {
        this.#log.warn({ err }, 'Listing cached objects for the shard failed');
        continue;
      }
      const now = new Set<string>();
      for (const req of reqs) {
        const key = this.#shardKey(req);
        if (!s.owns(key)) continue;
        owned.add(key);
        if (!s.permitted(key)) continue;
        const rk = requestKey(req);
        now.add(rk);
        if (!att.permitted.has(rk)) att.queue.add(req);
      }
      for (const [rk, req] of att.deferred) {
        const key = this.#shardKey(req);
        if (!s.owns(key)) att.deferred.delete(rk);
        else if (s.permitted(key)) {
          att.deferred.delete(rk);
          if (!now.has(rk) || att.permitted.has(rk)) att.queue.add(req);
        }
      }
      att.permitted = now;
    }
    this.#metrics.owned.set({ name: this.name }, owned.size);
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
