/**
 * Paged lists (client-go `tools/pager`): follow `continue` tokens page by page, and when a token expires
 * (410 Expired/Gone) fall back once to one full list, as client-go's `ListPager` does with
 * `FullListIfExpired`.
 */
import { isGone, isResourceExpired } from './errors.js';
import type { Reader } from './interfaces.js';
import type { Kind, KubeObject, ObjectList } from './kinds.js';
import type { ListOptions } from './options.js';

/** Options of `listPages` / `listAll`: the list options (without `limit`/`continue`) plus paging. */
export interface ListPagesOptions extends Omit<ListOptions, 'limit' | 'continue'> {
  /** Objects per page (the `limit` query). @defaultValue 500 (client-go `defaultPageSize`) */
  readonly pageSize?: number;
  /**
   * When a continue token has expired (410), list once more, in full and without a limit, at the
   * requested resourceVersion — client-go's `FullListIfExpired`. `false`: throw the 410.
   * @defaultValue true
   */
  readonly fullListIfExpired?: boolean;
}

/**
 * One page of a paged list. `restarted: true` marks the full list sent after an expired continue token: it
 * is a complete list on its own, read at a newer resourceVersion than the pages before it, and it is the
 * last page. The pages before it belong to a snapshot that was abandoned (objects in them may have been
 * deleted or changed since): a consumer that built anything from them must discard it and start again from
 * this page, as client-go's `ListPager.List` drops the pages it had.
 */
export type ListPage<T extends KubeObject> = ObjectList<T> & { readonly restarted: boolean };

/**
 * The pages of a list, one request each, in order (each has `restarted: false`, except the restart below).
 * The first page's 410 (a resourceVersion too old) is thrown; a later page's 410 (the continue token
 * expired) is answered by one full list, the `restarted: true` page, after which the iteration ends (see
 * {@link ListPage}: what came before it is abandoned).
 * @throws StatusError, NoKindMatchError; RangeError for a pageSize below 1.
 */
export async function* listPages<T extends KubeObject>(
  reader: Pick<Reader, 'list'>,
  kind: Kind<T>,
  options: ListPagesOptions = {},
): AsyncGenerator<ListPage<T>, void, undefined> {
  const { pageSize = 500, fullListIfExpired = true, ...listOptions } = options;
  if (!(pageSize >= 1)) throw new RangeError(`listPages: pageSize must be ≥ 1, got ${pageSize}`);
  // Later pages carry the continue token without resourceVersion(Match): kube-apiserver refuses a continue
  // token with either ("specifying resource version is not allowed when using continue"); the token holds
  // the snapshot's resourceVersion. client-go's pager clears both the same way.
  const { resourceVersion: _rv, resourceVersionMatch: _rvm, ...laterPages } = listOptions;
  let token: string | undefined;
  for (;;) {
    let page: ObjectList<T>;
    try {
      page = await reader.list(
        kind,
        token ? { ...laterPages, limit: pageSize, continue: token } : { ...listOptions, limit: pageSize },
      );
    } catch (err) {
      if (!token || !fullListIfExpired || !(isResourceExpired(err) || isGone(err))) throw err;
      // At the requested resourceVersion(Match), as client-go's FullListIfExpired.
      const full = await reader.list(kind, listOptions);
      yield Object.assign(full, { restarted: true });
      return;
    }
    yield Object.assign(page, { restarted: false });
    token = page.metadata?.continue || undefined;
    if (!token) return;
  }
}

/**
 * Every object of one consistent snapshot of a list, read page by page (client-go `ListPager.List`):
 * `for await (const pod of listAll(client, Pod, { namespace }))`. The pages are held until the last one
 * has arrived and only then yielded, so after an expired continue token the earlier pages are dropped and
 * exactly the full list is yielded — never an object of an abandoned snapshot (one deleted or changed
 * since). Memory is that of the whole list; the server still answers it in pages. To process page by page,
 * use {@link listPages} and start again on a `restarted` page.
 * @throws as {@link listPages}; nothing is yielded when the list cannot be finished.
 */
export async function* listAll<T extends KubeObject>(
  reader: Pick<Reader, 'list'>,
  kind: Kind<T>,
  options: ListPagesOptions = {},
): AsyncGenerator<T, void, undefined> {
  let pages: ObjectList<T>[] = [];
  for await (const page of listPages(reader, kind, options)) {
    if (page.restarted) pages = [];
    pages.push(page);
  }
  for (const page of pages) yield* page.items;
}
