/** The options and results of `testReconciler`: what a test hands it and what it reports back. */
import type { EventHandler, Logger, Request, Result } from '@kubeloop/builder';
import type { Client, Kind, KubeObject } from '@kubeloop/client';
import type { Interceptor } from '@kubeloop/client/interceptor';
import type { Clock } from '@kubeloop/core';
import type { FakeCall, FakeClientOptions, RecordingClient } from '../fake/fake-client.js';
import type { FakeRecorder, RecordedEvent } from './fake-recorder.js';

/** What a reconciler factory gets from {@link testReconciler}: build the reconciler on these. */
export interface ReconcilerTestContext {
  /**
   * The client to hand the reconciler: the fake (or `options.client`), with a call log so the run can report
   * the writes.
   */
  readonly client: RecordingClient;
  /** Records Events in memory. */
  readonly recorder: FakeRecorder;
  /** The clock to give the reconciler (`options.clock`, else a new `FakeClock` at 0). */
  readonly clock: Clock;
}

/** A watch as the controller would have it: changes of `kind` go through `handler` to requests. */
export interface TestWatch {
  readonly kind: Kind;
  readonly handler: EventHandler;
}

/** Options of {@link testReconciler}. */
export interface TestReconcilerOptions {
  /** Objects in the fake before the first reconcile (`newFakeClient`'s `objects`). Not with `client`. */
  readonly objects?: readonly KubeObject[];
  /**
   * Run against this client instead of a new fake: a `FakeClient` a test prepared, or a live client on envtest or
   * a cluster (see `startTestTarget`). It is not closed afterwards. The changes are then looked for in the
   * request's namespace only (other tests may share the server).
   */
  readonly client?: Client;
  /** Interceptors of the fake made here (`newFakeClient`'s `interceptors`). Not with `client`. */
  readonly interceptors?: Interceptor | readonly Interceptor[];
  /** Other options of the fake made here (`fieldOwner`, `serverOptions`, …). */
  readonly fake?: Omit<FakeClientOptions, 'objects' | 'interceptors'>;
  /**
   * The request to reconcile. @defaultValue the one object of kind `for` in `objects`, when there is exactly
   * one
   */
  readonly request?: Request;
  /** The controller's primary kind (`.for(kind)`): its changes enqueue a request for the object. */
  readonly for?: Kind;
  /** Owned kinds (`.owns(kind)`): their changes enqueue their controller owner of kind `for`. */
  readonly owns?: readonly Kind[];
  /** Other watches (`.watches(kind, handler)`). */
  readonly watches?: readonly TestWatch[];
  /** Given to the reconciler factory. @defaultValue `new FakeClock()` */
  readonly clock?: Clock;
  /**
   * Keep reconciling the requests the changes enqueue (watch-caused, immediate ones) until none is left, at
   * most this many reconciles in all (`true`: 10). Requests to come later — `requeueAfterMs`, `requeue: true`
   * and errors, which a controller retries after a backoff — are reported, not run. @defaultValue false
   */
  readonly untilQuiescent?: boolean | number;
  /** Logger of the reconcile contexts. @defaultValue none */
  readonly log?: Logger;
}

/** Why a request was enqueued. */
export type EnqueueReason = 'watch' | 'requeue' | 'requeueAfter' | 'error';

/** A request a reconcile caused. */
export interface EnqueuedRequest {
  readonly request: Request;
  readonly reason: EnqueueReason;
  /** For `requeueAfter`: the delay in ms. */
  readonly afterMs?: number;
  /** For `watch`: the change that caused it, e.g. `update ConfigMap ns/name`. */
  readonly cause?: string;
}

/** One reconcile that ran. */
export interface ReconcileRun {
  readonly request: Request;
  /** What the reconcile resolved to (`undefined` when it threw). */
  readonly result: Result | undefined;
  /** What it threw (or an `InvalidResultError` for a malformed Result). */
  readonly error?: unknown;
  /** The writes it made through the client, in order, each with its result or error. */
  readonly writes: readonly FakeCall[];
  /** The requests it caused. */
  readonly enqueued: readonly EnqueuedRequest[];
}

/** What {@link testReconciler} returns. */
export interface ReconcileTestResult {
  /** The first reconcile's Result (`undefined` when it threw or returned nothing). */
  readonly result: Result | undefined;
  /** The first reconcile's error, if it threw. */
  readonly error?: unknown;
  /** Every reconcile that ran, in order. */
  readonly runs: readonly ReconcileRun[];
  /** Every write made, over all runs. */
  readonly writes: readonly FakeCall[];
  /** Every request enqueued, over all runs (watch-caused ones that were run afterwards included). */
  readonly enqueued: readonly EnqueuedRequest[];
  /** Requests still to run: later ones (requeue, requeueAfter, error) and, when the bound was hit, immediate ones. */
  readonly pending: readonly EnqueuedRequest[];
  /** Events recorded, in order. */
  readonly events: readonly RecordedEvent[];
  /** False when `untilQuiescent`'s bound stopped the run with immediate requests left. */
  readonly quiescent: boolean;
  /** Errors the handlers reported (a map function that threw). */
  readonly handlerErrors: readonly unknown[];
  /** The client the reconciles used (with its call log); a fake made here is closed by now. */
  readonly client: RecordingClient;
}
