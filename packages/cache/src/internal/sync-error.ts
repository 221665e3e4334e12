import type { KubeObject } from '@kubeloop/client';
import { InformerSyncError } from '../cache-errors.js';
import type { Informer } from '../informer.js';

/**
 * Why a cache's informers have not synced, or `undefined` when they all have: an {@link InformerSyncError}
 * for the first unsynced informer that has an error to tell (the one it stopped with, else its last list
 * error), else for the first unsynced one (`InformerCache.syncError`).
 */
export function firstSyncError(
  entries: Iterable<{ readonly gvk: string; readonly informer: Informer<KubeObject> }>,
): InformerSyncError | undefined {
  let first: { readonly gvk: string; readonly informer: Informer<KubeObject> } | undefined;
  for (const e of entries) {
    if (e.informer.hasSynced()) continue;
    first ??= e;
    const st = e.informer.status();
    if (st.terminalError !== undefined)
      return new InformerSyncError(e.gvk, true, { cause: st.terminalError });
    if (st.lastListError !== undefined)
      return new InformerSyncError(e.gvk, st.stopped, { cause: st.lastListError });
  }
  if (!first) return undefined;
  return new InformerSyncError(first.gvk, first.informer.isStopped(), {
    reason: first.informer.isStarted() ? 'no list has completed yet' : 'the cache has not started it',
  });
}
