import { isExpired, type KubeObject } from '@kubeloop/client';
import type { ListerWatcher } from './list-watch.js';

/** What a (paged) list gathered. */
export interface ListResult<T> {
  readonly items: T[];
  readonly resourceVersion: string;
  /** Some page carried a continue token. */
  readonly paginated: boolean;
}

/**
 * client-go `tools/pager`: lists in pages of `limit` (0: unpaged) until no `continue`, gathering items with a
 * loop (never a spread, so a page of any size is fine). Later pages carry only the continue token. An expired
 * continue token gives one full list without paging at `resourceVersion=""` (client-go `FullListIfExpired`).
 */
export async function pagedList<T extends KubeObject>(
  lw: ListerWatcher<T>,
  rv: string,
  limit: number,
  signal: AbortSignal,
): Promise<ListResult<T>> {
  const items: T[] = [];
  let listRV = '';
  let cont: string | undefined;
  let paginated = false;
  for (;;) {
    let page: Awaited<ReturnType<ListerWatcher<T>['list']>>;
    try {
      page = await lw.list({
        signal,
        ...(limit > 0 ? { limit } : {}),
        // Later pages carry only the continue token (a resourceVersion with continue is refused).
        ...(cont ? { continue: cont } : { resourceVersion: rv }),
      });
    } catch (err) {
      if (cont && isExpired(err)) {
        // The continue token expired mid-way: one full list without paging (client-go FullListIfExpired;
        // the pager has already cleared the resourceVersion, so this reads the most recent state).
        const full = await lw.list({ signal, resourceVersion: '' });
        return {
          items: full.items ?? [],
          resourceVersion: full.metadata?.resourceVersion ?? '',
          paginated,
        };
      }
      throw err;
    }
    const pageItems = page.items ?? [];
    for (let i = 0; i < pageItems.length; i++) items.push(pageItems[i]!);
    listRV = page.metadata?.resourceVersion ?? listRV;
    cont = page.metadata?.continue || undefined;
    if (!cont) break;
    paginated = true;
  }
  return { items, resourceVersion: listRV, paginated };
}
