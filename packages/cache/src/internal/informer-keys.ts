// The informer cache's keys of a kind (informer map, read-your-own-writes, store) and what it reports of each informer.
import type { Kind, KubeObject, ObjectKey } from '@kubeloop/client';
import type { CacheInformerInfo } from '../cache-types.js';
import type { Informer } from '../informer.js';

/**
 * Read-your-own-writes' key of a kind: `apiVersion/Kind`, the same for its typed and metadata-only
 * informers (a write through either is waited for by reads through both).
 */
export function trackerKey(kind: Kind): string {
  return `${kind.apiVersion}/${kind.kind}`;
}

export function storeKey(key: ObjectKey): string {
  return key.namespace ? `${key.namespace}/${key.name}` : key.name;
}

/** The informer map's key of a kind: `apiVersion/Kind`, plus `#metadata` for a metadata-only descriptor. */
export function informerKey(kind: Kind): string {
  return `${kind.apiVersion}/${kind.kind}${(kind as { metadataOnly?: boolean }).metadataOnly ? '#metadata' : ''}`;
}

/** What `InformerCache.informers()` says of the informer under cache key `key` (see {@link informerKey}). */
export function informerInfo(
  key: string,
  inf: Informer<KubeObject>,
  namespaces: readonly string[],
  namespaceInformers: readonly string[],
): CacheInformerInfo {
  const st = inf.status();
  const slash = key.lastIndexOf('/');
  const apiVersion = key.slice(0, slash);
  const gv = apiVersion.split('/');
  const err = st.lastListError;
  return {
    name: key,
    group: gv.length === 2 ? gv[0]! : '',
    version: gv.at(-1)!,
    kind: key.slice(slash + 1).replace(/#metadata$/, ''),
    metadataOnly: key.endsWith('#metadata'),
    namespaces,
    namespaceInformers,
    synced: inf.hasSynced(),
    started: inf.isStarted(),
    stopped: inf.isStopped(),
    lastListError: err === undefined ? undefined : err instanceof Error ? err.message : String(err),
    stats: inf.stats(),
  };
}
