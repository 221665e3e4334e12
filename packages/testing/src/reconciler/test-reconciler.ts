/**
 * `testReconciler`: one reconcile (or a bounded run until quiescent) of a user's `Reconciler` against the fake
 * client, returning what it did — the writes, the requests it caused, the Events it recorded and its Result —
 * without a manager, cache, queue or server process (controller-runtime needs a fake client, a fake recorder
 * and hand-made requests for this, and still does not say what the reconcile would have enqueued).
 */
import {
  discardLogger,
  type EnqueueRequestForOwnerOptions,
  type EventHandler,
  enqueueRequestForObject,
  enqueueRequestForOwner,
  isTerminalError,
  type Reconciler,
  type Request,
  type Result,
  requestKey,
} from '@kubeloop/builder';
import type { Client, Kind, KubeObject } from '@kubeloop/client';
import { gvkOf } from '@kubeloop/client/apiutil';
import { FakeClock } from '@kubeloop/core/testing';
import { type FakeCall, newFakeClient, type RecordingClient, recordCalls } from '../fake/fake-client.js';
import { FakeRecorder } from './fake-recorder.js';
import type {
  EnqueuedRequest,
  ReconcileRun,
  ReconcilerTestContext,
  ReconcileTestResult,
  TestReconcilerOptions,
} from './types.js';

export { FakeRecorder, type RecordedEvent } from './fake-recorder.js';
export type {
  EnqueuedRequest,
  EnqueueReason,
  ReconcileRun,
  ReconcilerTestContext,
  ReconcileTestResult,
  TestReconcilerOptions,
  TestWatch,
} from './types.js';

interface Watched {
  readonly kind: Kind;
  readonly handlers: EventHandler[];
}

const keyOf = (o: KubeObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
const describe = (verb: string, kind: Kind, o: KubeObject) =>
  `${verb} ${kind.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name}`;

/**
 * Runs `reconciler` for one request against a fake client (`newFakeClient`: envtest's semantics, in process)
 * and reports what it did: the Result (or error), the writes, the requests its changes enqueue through the
 * controller's watches (`for`, `owns`, `watches`, with builder's own handlers), the requests it asks for
 * (`requeue`, `requeueAfterMs`, an error's retry — not a `TerminalError`'s), and the Events it recorded.
 *
 * The changes are found as an informer would find them after a relist: each watched kind is listed before and
 * after every reconcile and compared by resourceVersion, so writes made by any path (status, patches,
 * deleteAllOf, an interceptor) count, and two writes to one object are one update, as a controller's queue
 * would collapse them. With `untilQuiescent`, watch-caused requests are reconciled in turn (deduplicated, in
 * order) until none is left or the bound is hit.
 *
 * `reconciler` is the Reconciler, or a factory called once with the fake client, a {@link FakeRecorder} and
 * the clock. @throws TypeError when `request` is missing and cannot be derived, or `objects`/`interceptors`
 * come with `client`; what `newFakeClient` throws for bad `objects`.
 */
export async function testReconciler(
  reconciler: Reconciler | ((t: ReconcilerTestContext) => Reconciler),
  options: TestReconcilerOptions = {},
): Promise<ReconcileTestResult> {
  if (options.client && (options.objects || options.interceptors))
    throw new TypeError(
      'testReconciler: objects and interceptors belong to the fake it makes; not with client',
    );
  const request = options.request ?? defaultRequest(options);
  const made = options.client
    ? undefined
    : await newFakeClient({
        ...(options.fake ?? {}),
        ...(options.objects ? { objects: options.objects } : {}),
        ...(options.interceptors !== undefined ? { interceptors: options.interceptors } : {}),
      });
  const given: Client = options.client ?? made!;
  const client = recordCalls(given);
  // the state is read around the log and the interceptors (a test's injected failures must not break it)
  const reader = 'unintercepted' in given ? (given as RecordingClient).unintercepted : given;
  const scope = options.client && request.namespace ? request.namespace : undefined;
  const recorder = new FakeRecorder();
  const clock = options.clock ?? new FakeClock();
  const r = typeof reconciler === 'function' ? reconciler({ client, recorder, clock }) : reconciler;
  const watched = watchesOf(client, options);
  const maxRuns =
    options.untilQuiescent === true
      ? 10
      : typeof options.untilQuiescent === 'number'
        ? options.untilQuiescent
        : 1;
  if (!(Number.isInteger(maxRuns) && maxRuns >= 1))
    throw new TypeError(
      `testReconciler: untilQuiescent must be true or an integer >= 1, got ${options.untilQuiescent}`,
    );

  const runs: ReconcileRun[] = [];
  const handlerErrors: unknown[] = [];
  const later: EnqueuedRequest[] = [];
  const queue: Request[] = [request];
  let seq = 0;
  try {
    while (queue.length > 0 && runs.length < maxRuns) {
      const req = queue.shift()!;
      const before = await snapshot(reader, watched, scope);
      const callsBefore = client.calls().length;
      const ac = new AbortController();
      let result: Result | undefined;
      let error: unknown;
      try {
        const out = await r.reconcile(
          { signal: ac.signal, log: options.log ?? discardLogger, reconcileID: `test-${++seq}` },
          req,
        );
        const bad = malformedResult(out);
        if (bad) error = bad;
        else result = (out ?? undefined) as Result | undefined;
      } catch (e) {
        error = e;
      } finally {
        ac.abort();
      }
      const writes = client.calls().slice(callsBefore).filter(isWrite);
      const enqueued: EnqueuedRequest[] = [];
      const after = await snapshot(reader, watched, scope);
      for (const e of await changes(watched, before, after, handlerErrors)) enqueued.push(e);
      if (error !== undefined) {
        if (!isTerminalError(error)) enqueued.push({ request: req, reason: 'error' });
      } else if (result?.requeueAfterMs !== undefined && result.requeueAfterMs > 0)
        enqueued.push({ request: req, reason: 'requeueAfter', afterMs: result.requeueAfterMs });
      else if (result?.requeue) enqueued.push({ request: req, reason: 'requeue' });
      runs.push({ request: req, result, ...(error !== undefined ? { error } : {}), writes, enqueued });
      for (const e of enqueued) {
        if (e.reason !== 'watch') {
          later.push(e);
          continue;
        }
        if (!queue.some((q) => requestKey(q) === requestKey(e.request))) queue.push(e.request);
      }
    }
  } finally {
    await made?.close();
  }
  const first = runs[0]!;
  const pending = [...queue.map((request): EnqueuedRequest => ({ request, reason: 'watch' })), ...later];
  // a single run reports its watch-caused requests as pending (they were not run)
  return {
    result: first.result,
    ...(first.error !== undefined ? { error: first.error } : {}),
    runs,
    writes: runs.flatMap((x) => x.writes),
    enqueued: runs.flatMap((x) => x.enqueued),
    pending: maxRuns === 1 ? runs[0]!.enqueued : pending,
    events: recorder.events,
    quiescent: maxRuns === 1 ? !first.enqueued.some((e) => e.reason === 'watch') : queue.length === 0,
    handlerErrors,
    client,
  };
}

/**
 * What a controller refuses as a Result (builder's `InvalidResultError` cases: not an object, a `requeueAfterMs`
 * that is not a finite number >= 0, a `requeue` that is not a boolean), as an Error; the run records it as the
 * reconcile's error, as the controller does.
 */
function malformedResult(out: unknown): Error | undefined {
  if (out === undefined || out === null) return undefined;
  if (typeof out !== 'object' || Array.isArray(out))
    return new TypeError(`reconcile resolved to ${typeof out}, not a Result`);
  const { requeueAfterMs: after, requeue } = out as { requeueAfterMs?: unknown; requeue?: unknown };
  if (after !== undefined && (typeof after !== 'number' || !Number.isFinite(after) || after < 0))
    return new TypeError(`Result.requeueAfterMs must be a finite number of ms >= 0, got ${String(after)}`);
  if (requeue !== undefined && typeof requeue !== 'boolean')
    return new TypeError(`Result.requeue must be a boolean, got ${String(requeue)}`);
  return undefined;
}

function isWrite(c: FakeCall): boolean {
  return c.verb !== 'get' && c.verb !== 'list' && c.verb !== 'watch';
}

function defaultRequest(options: TestReconcilerOptions): Request {
  const primary = options.for ? gvkOf(options.for) : undefined;
  const of = primary
    ? (options.objects ?? []).filter((o) => {
        const g = gvkOf({ apiVersion: o.apiVersion ?? '', kind: o.kind ?? '' });
        return g.group === primary.group && g.kind === primary.kind;
      })
    : [];
  if (of.length !== 1)
    throw new TypeError(
      `testReconciler: request is required (it defaults to the one object of kind \`for\` in objects; found ${of.length})`,
    );
  return { namespace: of[0]!.metadata?.namespace ?? '', name: of[0]!.metadata?.name ?? '' };
}

function watchesOf(client: Client, options: TestReconcilerOptions): Watched[] {
  const out: Watched[] = [];
  const add = (kind: Kind, handler: EventHandler) => {
    const g = gvkOf(kind);
    const w = out.find((x) => {
      const h = gvkOf(x.kind);
      return h.group === g.group && h.kind === g.kind;
    });
    if (w) w.handlers.push(handler);
    else out.push({ kind, handlers: [handler] });
  };
  if (options.for) add(options.for, enqueueRequestForObject());
  const ownerOptions: EnqueueRequestForOwnerOptions = { onlyController: true };
  for (const k of options.owns ?? []) {
    if (!options.for) throw new TypeError('testReconciler: owns needs for (the owner kind)');
    add(k, enqueueRequestForOwner(client.restMapper, options.for, ownerOptions));
  }
  for (const w of options.watches ?? []) add(w.kind, w.handler);
  return out;
}

type Snapshot = Map<Watched, Map<string, KubeObject>>;

async function snapshot(
  reader: Client,
  watched: readonly Watched[],
  namespace: string | undefined,
): Promise<Snapshot> {
  const out: Snapshot = new Map();
  for (const w of watched) {
    const list = await reader.list(w.kind, namespace ? { namespace } : {});
    out.set(w, new Map(list.items.map((o) => [keyOf(o), o])));
  }
  return out;
}

async function changes(
  watched: readonly Watched[],
  before: Snapshot,
  after: Snapshot,
  handlerErrors: unknown[],
): Promise<EnqueuedRequest[]> {
  const out: EnqueuedRequest[] = [];
  for (const w of watched) {
    const b = before.get(w)!;
    const a = after.get(w)!;
    const events: Array<{ cause: string; run: (h: EventHandler, q: QueueLike) => void | Promise<void> }> = [];
    for (const [k, o] of a) {
      const old = b.get(k);
      if (!old)
        events.push({
          cause: describe('create', w.kind, o),
          run: (h, q) => h.create({ object: o, isInInitialList: false }, q),
        });
      else if (old.metadata?.resourceVersion !== o.metadata?.resourceVersion)
        events.push({
          cause: describe('update', w.kind, o),
          run: (h, q) => h.update({ objectOld: old, objectNew: o }, q),
        });
    }
    for (const [k, o] of b)
      if (!a.has(k))
        events.push({
          cause: describe('delete', w.kind, o),
          run: (h, q) => h.delete({ object: o, deleteStateUnknown: false }, q),
        });
    for (const e of events)
      for (const h of w.handlers) {
        const q: QueueLike = {
          add: (request) => {
            if (!out.some((x) => requestKey(x.request) === requestKey(request)))
              out.push({
                request: { namespace: request.namespace, name: request.name },
                reason: 'watch',
                cause: e.cause,
              });
          },
          handlerError: (err) => handlerErrors.push(err),
        };
        await e.run(h, q);
      }
  }
  return out;
}

interface QueueLike {
  add(request: Request): void;
  handlerError(err: unknown, details: Record<string, unknown>): void;
}
