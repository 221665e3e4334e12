import type {
  FieldSelectorInput,
  Kind,
  KubeObject,
  LabelSelectorInput,
  ObjectList,
  Reader,
  WatchClient,
  WatchEvent,
} from '@kubeloop/client';
import type { ReflectorStore } from './reflector-options.js';

/** Options the reflector passes to `list`. */
export interface ListCallOptions<T extends KubeObject = KubeObject> {
  readonly resourceVersion?: string;
  readonly limit?: number;
  readonly continue?: string;
  readonly signal: AbortSignal;
  /** Decodes each item from its JSON text instead of `JSON.parse` (the client's `ListOptions.decodeItem`). */
  readonly decodeItem?: (json: string) => T;
}

/** Options the reflector passes to `watch`. */
export interface WatchCallOptions {
  readonly resourceVersion: string;
  readonly allowWatchBookmarks: boolean;
  /** Server-side timeout of this watch, in seconds. */
  readonly timeoutSeconds: number;
  /** Streaming list (WatchList): initial state as ADDED events, then a bookmark marking their end. */
  readonly sendInitialEvents?: boolean;
  readonly resourceVersionMatch?: 'NotOlderThan';
  readonly signal: AbortSignal;
  /** Each event's object carries its JSON text (the client's `WatchOptions.keepObjectJson`). */
  readonly keepObjectJson?: boolean;
}

/** ListerWatcher knows how to list and watch one kind of object (client-go `cache.ListerWatcher`). */
export interface ListerWatcher<T extends KubeObject = KubeObject> {
  list(options: ListCallOptions<T>): Promise<ObjectList<T>>;
  watch(options: WatchCallOptions): AsyncIterable<WatchEvent<T>>;
}

/** What to list and watch: one namespace (or all) and optional selectors. */
export interface ListWatchScope {
  /** Absent or `''`: all namespaces. */
  readonly namespace?: string;
  readonly labelSelector?: LabelSelectorInput;
  readonly fieldSelector?: FieldSelectorInput;
}

/**
 * A ListerWatcher over a client (client-go `NewFilteredListWatchFromClient`): list and watch carry the
 * same namespace and selectors.
 */
export function listWatchFor<T extends KubeObject>(
  client: Reader & WatchClient,
  kind: Kind<T>,
  scope: ListWatchScope = {},
): ListerWatcher<T> {
  const common = {
    ...(scope.namespace ? { namespace: scope.namespace } : {}),
    ...(scope.labelSelector !== undefined ? { labelSelector: scope.labelSelector } : {}),
    ...(scope.fieldSelector !== undefined ? { fieldSelector: scope.fieldSelector } : {}),
  };
  return {
    list: (o) =>
      client.list(kind, {
        ...common,
        signal: o.signal,
        ...(o.resourceVersion !== undefined ? { resourceVersion: o.resourceVersion } : {}),
        ...(o.limit !== undefined ? { limit: o.limit } : {}),
        ...(o.continue !== undefined ? { continue: o.continue } : {}),
        ...(o.decodeItem ? { decodeItem: o.decodeItem } : {}),
      }),
    watch: (o) =>
      client.watch(kind, {
        ...common,
        signal: o.signal,
        resourceVersion: o.resourceVersion,
        allowWatchBookmarks: o.allowWatchBookmarks,
        timeoutSeconds: o.timeoutSeconds,
        ...(o.sendInitialEvents !== undefined ? { sendInitialEvents: o.sendInitialEvents } : {}),
        ...(o.resourceVersionMatch !== undefined ? { resourceVersionMatch: o.resourceVersionMatch } : {}),
        ...(o.keepObjectJson ? { keepObjectJson: true } : {}),
      }),
  };
}

/**
 * `lw` asking for the objects' JSON text when the store keeps text instead of objects (its `decodeListItem`,
 * `keepObjectJson`); `lw` itself otherwise. A ListerWatcher that ignores the asks hands over parsed objects,
 * which such a store re-encodes.
 */
export function withJsonRetention<T extends KubeObject>(
  lw: ListerWatcher<T>,
  store: ReflectorStore<T>,
): ListerWatcher<T> {
  const decodeItem = store.decodeListItem?.bind(store);
  const keep = store.keepObjectJson === true;
  if (!decodeItem && !keep) return lw;
  return {
    list: (o) => lw.list(decodeItem ? { ...o, decodeItem } : o),
    watch: (o) => lw.watch(keep ? { ...o, keepObjectJson: true } : o),
  };
}
