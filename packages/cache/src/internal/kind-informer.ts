import type { Kind, KubeObject } from '@kubeloop/client';
import { gvkOf } from '@kubeloop/client/apiutil';
import type { Logger } from '@kubeloop/core';
import { type ByObject, DEFAULT_SYNC_PERIOD_MS, type InformerCacheOptions } from '../cache-options.js';
import { listWatchFor } from '../list-watch.js';
import type { ReadYourWrites } from '../read-your-writes.js';
import { SharedIndexInformer } from '../shared-index-informer.js';
import type { TransformFunc } from '../transforms.js';
import type { WatchListSupport } from '../watch-list-support.js';
import { trackerKey } from './informer-keys.js';
import { MultiNamespaceInformer } from './multi-namespace-informer.js';

/** What the informer cache knows when it builds the informer of one kind. */
export interface KindInformerContext<T extends KubeObject> {
  readonly options: InformerCacheOptions;
  /** The kind's own options (`byObject`), if any. */
  readonly byObject: ByObject<T> | undefined;
  /** The namespaces it watches; empty: all. */
  readonly namespaces: readonly string[];
  readonly readYourWrites: ReadYourWrites | undefined;
  readonly watchListSupport: WatchListSupport;
  readonly logger: Logger;
}

/**
 * The informer of `kind` under the cache key `key`, from the cache's options and the kind's own (controller-runtime
 * `internal/informers.go` `addInformerToMap`): one `SharedIndexInformer`, or one per namespace behind a
 * `MultiNamespaceInformer` when the cache is restricted to namespaces (`multi_namespace_cache.go`).
 */
export function newKindInformer<T extends KubeObject>(
  kind: Kind<T>,
  key: string,
  ctx: KindInformerContext<T>,
): SharedIndexInformer<T> | MultiNamespaceInformer<T> {
  const o = ctx.options;
  const by = ctx.byObject;
  const namespaces = ctx.namespaces;
  const labelSelector = by?.labelSelector ?? o.defaultLabelSelector;
  const fieldSelector = by?.fieldSelector ?? o.defaultFieldSelector;
  const transform = by?.transform === null ? undefined : (by?.transform ?? o.defaultTransform ?? o.transform);
  const syncPeriodMs = by?.syncPeriodMs ?? o.syncPeriodMs ?? o.resyncPeriodMs ?? DEFAULT_SYNC_PERIOD_MS;
  // WatchList by default, as client-go 1.35+ (the reflector falls back to list + watch on a server that refuses it).
  const useWatchList = by?.useWatchList ?? o.useWatchList ?? true;
  const ryow = ctx.readYourWrites;
  const tracked = trackerKey(kind);
  const onStored = ryow
    ? (k: string, obj: KubeObject | undefined, deleted: boolean) => ryow.observe(tracked, k, obj, deleted)
    : undefined;
  const make = (namespace: string | undefined): SharedIndexInformer<T> =>
    new SharedIndexInformer<T>(
      listWatchFor(o.client, kind, {
        ...(namespace ? { namespace } : {}),
        ...(labelSelector !== undefined ? { labelSelector } : {}),
        ...(fieldSelector !== undefined ? { fieldSelector } : {}),
      }),
      {
        name: namespace ? `${key}@${namespace}` : key,
        logger: ctx.logger,
        resyncPeriodMs: syncPeriodMs,
        ...(transform ? { transform: transform as TransformFunc<T> } : {}),
        ...(o.clock ? { clock: o.clock } : {}),
        ...(onStored ? { onStored } : {}),
        ...(o.objectRetention ? { objectRetention: o.objectRetention } : {}),
        reflector: {
          ...(o.reflector ?? {}),
          useWatchList,
          watchListSupport: ctx.watchListSupport,
        },
      },
    );
  if (namespaces.length === 0) return make(undefined);
  return new MultiNamespaceInformer<T>(
    namespaces,
    make,
    () => o.client.restMapper.isNamespaced(gvkOf(kind)),
    ctx.logger,
    o.clock,
  );
}
