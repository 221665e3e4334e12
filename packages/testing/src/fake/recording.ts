/**
 * The call log of a `Client`: `recordCalls` wraps any client (a fake, or a live one on envtest or a real cluster)
 * with an interceptor that records every call as its caller made it and what it came to; the fake client is
 * built on the same log.
 */
import type {
  Client,
  GroupVersionKind,
  Kind,
  KubeObject,
  ObjectKey,
  SubResourceClient,
} from '@kubeloop/client';
import { gvkOf } from '@kubeloop/client/apiutil';
import { InterceptedClient, type Interceptor } from '@kubeloop/client/interceptor';

/** The verbs a {@link FakeCall} records. */
export type FakeVerb =
  | 'get'
  | 'list'
  | 'create'
  | 'update'
  | 'patch'
  | 'apply'
  | 'delete'
  | 'deleteAllOf'
  | 'watch';

/** One call made through the fake client, as its caller made it (interceptors see the same calls). */
export interface FakeCall {
  readonly verb: FakeVerb;
  readonly kind: GroupVersionKind;
  /** `'status'`, `'scale'`, … for a subresource call. */
  readonly subResource?: string;
  readonly namespace?: string;
  readonly name?: string;
  /** What was sent: the object (create, update), the patch (patch), the apply configuration (apply). */
  readonly body?: unknown;
  readonly options?: unknown;
  /** What came back (an object, a list), once the call resolved. */
  result?: unknown;
  /** Why it failed, once the call rejected. */
  error?: unknown;
  /** True once the call resolved or rejected. */
  done: boolean;
}

/** A `Client` that logs the calls made through it (see {@link recordCalls}). */
export interface RecordingClient extends Client {
  /** Calls made through this client since it was made (or {@link RecordingClient.clearCalls}), oldest first. */
  calls(): readonly FakeCall[];
  /** The calls that write: create, update, patch, apply, delete, deleteAllOf (subresources included). */
  writes(): readonly FakeCall[];
  clearCalls(): void;
  /** The client below the log (for a fake, below its interceptors too): calls on it are not logged. */
  readonly unintercepted: Client;
}

/**
 * `client` with a call log: every call, as its caller made it, with its result or error once it settles
 * ({@link FakeCall}). Works on any `Client` — a fake, or a live client on envtest or a real cluster — which is
 * what lets `testReconciler` report the writes of a reconcile on every test target.
 */
export function recordCalls(client: Client): RecordingClient {
  const log: FakeCall[] = [];
  return new LoggedClient(client, log, client);
}

const WRITE_VERBS: ReadonlySet<FakeVerb> = new Set([
  'create',
  'update',
  'patch',
  'apply',
  'delete',
  'deleteAllOf',
]);

function keyOf(k: ObjectKey | KubeObject | undefined): { namespace?: string; name?: string } {
  if (!k) return {};
  const meta = (k as KubeObject).metadata;
  const ns = meta ? meta.namespace : (k as ObjectKey).namespace;
  const name = meta ? meta.name : (k as ObjectKey).name;
  return { ...(ns ? { namespace: ns } : {}), ...(name !== undefined ? { name } : {}) };
}

/** An interceptor that logs every call passing through it and what it came to. */
export function recorder(log: FakeCall[]): Interceptor {
  const track = <R>(call: Omit<FakeCall, 'done' | 'result' | 'error'>, run: () => Promise<R>): Promise<R> => {
    const entry: FakeCall = { ...call, done: false };
    log.push(entry);
    return run().then(
      (r) => {
        entry.result = r;
        entry.done = true;
        return r;
      },
      (e: unknown) => {
        entry.error = e;
        entry.done = true;
        throw e;
      },
    );
  };
  const base = (verb: FakeVerb, kind: Kind, subResource?: string) => ({
    verb,
    kind: gvkOf(kind),
    ...(subResource !== undefined ? { subResource } : {}),
  });
  const opt = (o: unknown) => (o !== undefined ? { options: o } : {});
  return {
    get: (c, kind, key, o) =>
      track({ ...base('get', kind), ...keyOf(key), ...opt(o) }, () => c.get(kind, key, o)),
    list: (c, kind, o) =>
      track({ ...base('list', kind), ...(o?.namespace ? { namespace: o.namespace } : {}), ...opt(o) }, () =>
        c.list(kind, o),
      ),
    create: (c, kind, obj, o) =>
      track({ ...base('create', kind), ...keyOf(obj), body: obj, ...opt(o) }, () => c.create(kind, obj, o)),
    update: (c, kind, obj, o) =>
      track({ ...base('update', kind), ...keyOf(obj), body: obj, ...opt(o) }, () => c.update(kind, obj, o)),
    patch: (c, kind, key, p, o) =>
      track({ ...base('patch', kind), ...keyOf(key), body: p, ...opt(o) }, () => c.patch(kind, key, p, o)),
    apply: (c, kind, cfg, o) =>
      track({ ...base('apply', kind), ...keyOf(cfg as KubeObject), body: cfg, ...opt(o) }, () =>
        c.apply(kind, cfg, o),
      ),
    delete: (c, kind, key, o) =>
      track({ ...base('delete', kind), ...keyOf(key), ...opt(o) }, () => c.delete(kind, key, o)),
    deleteAllOf: (c, kind, o) =>
      track(
        { ...base('deleteAllOf', kind), ...(o?.namespace ? { namespace: o.namespace } : {}), ...opt(o) },
        () => c.deleteAllOf(kind, o),
      ),
    watch: (c, kind, o) => {
      log.push({
        ...base('watch', kind),
        ...(o?.namespace ? { namespace: o.namespace } : {}),
        ...opt(o),
        done: true,
      });
      return c.watch(kind, o);
    },
    subResourceGet: (c, sub, kind, key, o) =>
      track({ ...base('get', kind, sub), ...keyOf(key), ...opt(o) }, () => subOf(c, sub).get(kind, key, o)),
    subResourceCreate: (c, sub, kind, obj, body, o) =>
      track({ ...base('create', kind, sub), ...keyOf(obj), body, ...opt(o) }, () =>
        subOf(c, sub).create(kind, obj, body, o),
      ),
    subResourceUpdate: (c, sub, kind, obj, o) =>
      track({ ...base('update', kind, sub), ...keyOf(obj), body: o?.subResourceBody ?? obj, ...opt(o) }, () =>
        subOf(c, sub).update(kind, obj, o),
      ),
    subResourcePatch: (c, sub, kind, key, p, o) =>
      track({ ...base('patch', kind, sub), ...keyOf(key), body: p, ...opt(o) }, () =>
        subOf(c, sub).patch(kind, key, p, o),
      ),
    subResourceApply: (c, sub, kind, cfg, o) =>
      track({ ...base('apply', kind, sub), ...keyOf(cfg as KubeObject), body: cfg, ...opt(o) }, () =>
        subOf(c, sub).apply(kind, cfg, o),
      ),
  };
}

function subOf(c: Client, sub: string): SubResourceClient {
  return sub === 'status' ? (c.status() as SubResourceClient) : c.subResource(sub);
}

/**
 * A client whose calls go through the recording interceptor over `inner`; the log is read back through it.
 * `unintercepted` is the client below every interceptor (for a fake, below its user interceptors too).
 */
export class LoggedClient extends InterceptedClient implements RecordingClient {
  readonly unintercepted: Client;
  readonly #log: FakeCall[];

  constructor(inner: Client, log: FakeCall[], unintercepted: Client) {
    super(inner, recorder(log));
    this.#log = log;
    this.unintercepted = unintercepted;
  }

  calls(): readonly FakeCall[] {
    return [...this.#log];
  }

  writes(): readonly FakeCall[] {
    return this.#log.filter((c) => WRITE_VERBS.has(c.verb));
  }

  clearCalls(): void {
    this.#log.length = 0;
  }
}
