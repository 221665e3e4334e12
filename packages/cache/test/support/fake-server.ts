import { type KubeObject, type ObjectList, StatusError, type WatchEvent } from '@kubeloop/client';
import { withRawJson } from '@kubeloop/client/apiutil';
import { onAbort } from '@kubeloop/core';
import type { ListCallOptions, ListerWatcher, WatchCallOptions } from '../../src/index.js';

/** A Status error as kube-apiserver sends it. */
export function statusError(code: number, reason: string, message: string, extra: object = {}): StatusError {
  return new StatusError({
    apiVersion: 'v1',
    kind: 'Status',
    status: 'Failure',
    code,
    reason,
    message,
    ...extra,
  });
}

/** The ERROR event a watch sends when its resourceVersion is too old (410 Expired). */
export function expired(message: string) {
  return {
    type: 'ERROR' as const,
    object: { apiVersion: 'v1', kind: 'Status', status: 'Failure', code: 410, reason: 'Expired', message },
  };
}

export const expiredEvent = expired('too old');

/** A Logger that drops all but warnings, which it records in `warns` (fields plus `msg`). */
export function warnRecordingLogger() {
  const warns: Array<Record<string, unknown>> = [];
  const logger = {
    debug() {},
    info() {},
    warn(f: Record<string, unknown>, msg: string) {
      warns.push({ ...f, msg });
    },
    error() {},
    child() {
      return logger;
    },
  };
  return { logger, warns };
}

export const cm = (
  name: string,
  rv: number,
  data: Record<string, string> = {},
  namespace = 'ns',
  labels?: Record<string, string>,
): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace, name, resourceVersion: String(rv), ...(labels ? { labels } : {}) },
    data,
  }) as KubeObject;

interface LogEntry {
  readonly rv: number;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly obj: KubeObject;
}

interface LiveWatch {
  readonly opts: WatchCallOptions;
  readonly queue: Array<WatchEvent | { end: true; error?: unknown }>;
  wake?: () => void;
}

/**
 * A lister-watcher that answers like kube-apiserver with its watch cache on (the rules C38 is about):
 * - `resourceVersion=""` — the latest state from etcd, paged by `limit`;
 * - `resourceVersion="0"` — the watch cache's latest state, `limit` ignored (never paged);
 * - `resourceVersion=X` with `limit` — an **exact read** of the state at X from etcd (old data, list RV X), or
 *   410 Expired once X is compacted;
 * - `resourceVersion=X` without `limit` — "not older than X" from the watch cache (the latest state), or 504
 *   "Too large resource version" when X is ahead of the server;
 * - `continue` — the next page at the token's resourceVersion, 410 once it is compacted;
 * - watch from X — the events after X, then live events; 410 when X is older than the watch cache's window.
 * `watchCache: false` turns the cache off: RV=0 and not-older-than lists are then paged reads from etcd.
 */
export class FakeServer implements ListerWatcher {
  rv = 1;
  readonly log: LogEntry[] = [];
  /** The latest state by namespace/name (so writes need not replay the log). */
  readonly #current = new Map<string, KubeObject>();
  /** Lists at or below this resourceVersion are gone (410). */
  compactedRV = 0;
  /** The watch cache holds events after this resourceVersion; a watch from an older one gets 410. */
  watchCacheStartRV = 0;
  watchCache = true;
  readonly listCalls: ListCallOptions[] = [];
  readonly watchCalls: WatchCallOptions[] = [];
  readonly live: LiveWatch[] = [];
  /** Errors to throw from the next list calls, in order. */
  readonly listFaults: unknown[] = [];
  /** Scripts for the next watch calls: an error thrown at once, or events then an end. */
  readonly watchFaults: Array<{ error?: unknown; events?: WatchEvent[]; end?: boolean }> = [];

  constructor(initial = 0) {
    for (let i = 0; i < initial; i++) this.create(`cm-${i}`);
  }

  create(
    name: string,
    data: Record<string, string> = {},
    namespace = 'ns',
    labels?: Record<string, string>,
  ): KubeObject {
    return this.#write('ADDED', name, data, namespace, labels);
  }
  modify(name: string, data: Record<string, string>, namespace = 'ns'): KubeObject {
    return this.#write('MODIFIED', name, data, namespace);
  }
  remove(name: string, namespace = 'ns'): KubeObject {
    return this.#write('DELETED', name, {}, namespace);
  }

  #write(
    type: LogEntry['type'],
    name: string,
    data: Record<string, string>,
    namespace: string,
    labels?: Record<string, string>,
  ): KubeObject {
    this.rv++;
    const key = `${namespace}/${name}`;
    const prev = this.#current.get(key);
    const obj = cm(
      name,
      this.rv,
      type === 'DELETED' && prev ? ((prev as { data?: Record<string, string> }).data ?? {}) : data,
      namespace,
      labels ?? prev?.metadata?.labels,
    );
    this.log.push({ rv: this.rv, type, obj });
    if (type === 'DELETED') this.#current.delete(key);
    else this.#current.set(key, obj);
    for (const w of this.live) this.#deliver(w, { type, object: structuredClone(obj) });
    return obj;
  }

  /** The state at resourceVersion `at` (sorted by name). */
  stateAt(at: number): KubeObject[] {
    const m = new Map<string, KubeObject>();
    for (const e of this.log) {
      if (e.rv > at) break;
      const key = `${e.obj.metadata?.namespace}/${e.obj.metadata?.name}`;
      if (e.type === 'DELETED') m.delete(key);
      else m.set(key, e.obj);
    }
    return [...m.values()].sort((a, b) => {
      const ka = `${a.metadata?.namespace}/${a.metadata?.name}`;
      const kb = `${b.metadata?.namespace}/${b.metadata?.name}`;
      return ka < kb ? -1 : ka > kb ? 1 : 0;
    });
  }

  /** An API server restart: open watches end, the watch cache starts empty at the current resourceVersion. */
  restart(): void {
    this.watchCacheStartRV = this.rv;
    this.endWatches();
  }

  /** Ends every open watch (cleanly, or with `error`). */
  endWatches(error?: unknown): void {
    for (const w of this.live.splice(0)) this.#deliver(w, { end: true, ...(error ? { error } : {}) });
  }

  #deliver(w: LiveWatch, item: LiveWatch['queue'][number]): void {
    w.queue.push(item);
    w.wake?.();
  }

  /** The decodeItem of the list being answered (an informer that keeps JSON passes one). */
  #decodeItem: ((json: string) => KubeObject) | undefined;

  #page(items: KubeObject[], at: number, offset: number, limit: number | undefined): ObjectList {
    const end = limit && limit > 0 ? Math.min(items.length, offset + limit) : items.length;
    const cont = end < items.length ? `${at}:${end}` : undefined;
    return {
      apiVersion: 'v1',
      kind: 'ConfigMapList',
      metadata: { resourceVersion: String(at), ...(cont ? { continue: cont } : {}) },
      items: this.#decodeItem
        ? items
            .slice(offset, end)
            .map((o) => (this.#decodeItem as (j: string) => KubeObject)(JSON.stringify(o)))
        : structuredClone(items.slice(offset, end)),
    };
  }

  async list(o: ListCallOptions): Promise<ObjectList> {
    this.listCalls.push({ ...o });
    this.#decodeItem = o.decodeItem;
    await Promise.resolve();
    const fault = this.listFaults.shift();
    if (fault) throw fault;
    if (o.continue) {
      const [at, offset] = o.continue.split(':').map(Number) as [number, number];
      if (at <= this.compactedRV)
        throw statusError(410, 'Expired', 'The provided continue parameter is too old');
      return this.#page(this.stateAt(at), at, offset, o.limit);
    }
    const rv = o.resourceVersion ?? '';
    if (rv === '') return this.#page(this.stateAt(this.rv), this.rv, 0, o.limit);
    if (rv === '0') {
      if (this.watchCache) return this.#page(this.stateAt(this.rv), this.rv, 0, undefined);
      return this.#page(this.stateAt(this.rv), this.rv, 0, o.limit);
    }
    const x = Number(rv);
    if (o.limit && o.limit > 0) {
      // Legacy rule: a specific resourceVersion with a limit is an exact read from etcd.
      if (x <= this.compactedRV)
        throw statusError(410, 'Expired', `The resourceVersion for the provided list is too old.`);
      return this.#page(this.stateAt(x), x, 0, o.limit);
    }
    if (x > this.rv)
      throw statusError(504, 'Timeout', `Too large resource version: ${x}, current: ${this.rv}`, {
        details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] },
      });
    return this.#page(this.stateAt(this.rv), this.rv, 0, undefined);
  }

  /** As a real server's client with `keepObjectJson`: each object carries its JSON text. */
  watch(o: WatchCallOptions): AsyncIterable<WatchEvent> {
    const inner = this.#watch(o);
    if (!o.keepObjectJson) return inner;
    return (async function* () {
      for await (const ev of inner) {
        if (ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED')
          withRawJson(ev.object as object, JSON.stringify(ev.object));
        yield ev;
      }
    })();
  }

  #watch(o: WatchCallOptions): AsyncIterable<WatchEvent> {
    this.watchCalls.push({ ...o });
    const fault = this.watchFaults.shift();
    const server = this;
    return (async function* () {
      await Promise.resolve();
      if (fault?.error && !fault.events) throw fault.error;
      if (fault) {
        for (const ev of fault.events ?? []) yield structuredClone(ev);
        if (fault.error) throw fault.error;
        return;
      }
      const from = Number(o.resourceVersion || server.rv);
      if (o.sendInitialEvents) {
        for (const obj of server.stateAt(server.rv)) yield { type: 'ADDED', object: structuredClone(obj) };
        yield {
          type: 'BOOKMARK',
          object: {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: {
              resourceVersion: String(server.rv),
              annotations: { 'k8s.io/initial-events-end': 'true' },
            },
          },
        } as WatchEvent;
      } else if (from < server.watchCacheStartRV) {
        yield expired('too old resource version') as WatchEvent;
        return;
      } else {
        for (const e of server.log) if (e.rv > from) yield { type: e.type, object: structuredClone(e.obj) };
      }
      const w: LiveWatch = { opts: o, queue: [] };
      server.live.push(w);
      // After the yields above the caller may have aborted already: onAbort then ends the watch at once.
      const unsubscribe = onAbort(o.signal, () => server.#deliver(w, { end: true }));
      try {
        for (;;) {
          const item = w.queue.shift();
          if (!item) {
            await new Promise<void>((r) => {
              w.wake = r;
            });
            w.wake = undefined;
            continue;
          }
          if ('end' in item) {
            if (item.error) throw item.error;
            return;
          }
          yield item;
        }
      } finally {
        unsubscribe();
        const i = server.live.indexOf(w);
        if (i >= 0) server.live.splice(i, 1);
      }
    })();
  }
}

/** A store that records what a reflector does. */
export class RecordingStore {
  readonly ops: string[] = [];
  items = new Map<string, KubeObject>();
  replaced = 0;
  replace(items: KubeObject[], rv: string): void {
    this.replaced++;
    this.items = new Map(items.map((o) => [o.metadata!.name!, o]));
    this.ops.push(`replace ${items.length}@${rv}`);
  }
  add(o: KubeObject): void {
    this.items.set(o.metadata!.name!, o);
    this.ops.push(`add ${o.metadata?.name}@${o.metadata?.resourceVersion}`);
  }
  update(o: KubeObject): void {
    this.items.set(o.metadata!.name!, o);
    this.ops.push(`update ${o.metadata?.name}@${o.metadata?.resourceVersion}`);
  }
  delete(o: KubeObject): void {
    this.items.delete(o.metadata!.name!);
    this.ops.push(`delete ${o.metadata?.name}`);
  }
  bookmark(rv: string): void {
    this.ops.push(`bookmark ${rv}`);
  }
}
