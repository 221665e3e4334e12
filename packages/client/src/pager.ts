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

/** One page; `restarted` is set on the full list sent after an expired continue token. */
export type ListPage<T extends KubeObject> = ObjectList<T> & { readonly restarted?: boolean };

/**
 * The pages of a list, one request each, in order. The first page's 410 (a resourceVersion too old) is
 * thrown; a later page's 410 (the continue token expired) is answered by one full list (the `restarted`
 * page), after which the iteration ends.
 * @throws StatusError, NoKindMatchError; RangeError for a pageSize below 1.
 */
export async function* listPages<T extends KubeObject>(
  reader: Pick<Reader, 'list'>,
  kind: Kind<T>,
  options: ListPagesOptions = {},
): AsyncGenerator<ListPage<T>, void, undefined> {
  const { pageSize = 500, fullListIfExpired = true, ...listOptions } = options;
  if (!(pageSize >= 1)) throw new RangeError(`listPages: pageSize must be ≥ 1, got ${pageSize}`);
  let token: string | undefined;
  for (;;) {
    let page: ObjectList<T>;
    try {
      page = await reader.list(kind, {
        ...listOptions,
        limit: pageSize,
        ...(token ? { continue: token } : {}),
      });
    } catch (err) {
      if (!token || !fullListIfExpired || !(isResourceExpired(err) || isGone(err))) throw err;
      const full = await reader.list(kind, listOptions);
      yield Object.assign(full, { restarted: true });
      return;
    }
    yield page;
    token = page.metadata?.continue || undefined;
    if (!token) return;
  }
}

/**
 * Every object of a list, page by page (`for await (const pod of listAll(client, Pod, { namespace }))`).
 * After an expired continue token the full list is read once; objects already yielded (by uid) are not
 * yielded again, so each object comes once, as it was in the page that first held it.
 */
export async function* listAll<T extends KubeObject>(
  reader: Pick<Reader, 'list'>,
  kind: Kind<T>,
  options: ListPagesOptions = {},
): AsyncGenerator<T, void, undefined> {
  const seen = new Set<string>();
  for await (const page of listPages(reader, kind, options)) {
    for (const item of page.items) {
      const uid = item.metadata?.uid;
      if (page.restarted && uid && seen.has(uid)) continue;
      if (uid) seen.add(uid);
      yield item;
    }
  }
}
