import { setImmediate as nextTurn } from 'node:timers/promises';
import type { KubeObject, ObjectList } from '@kubeloop/client';
import { isExpired } from '@kubeloop/client/errors';
import { childController } from './internal/abort.js';
import type { ListerWatcher } from './list-watch.js';
import { metaNamespaceKeyFunc } from './store.js';

/** What a (paged) list gathered. */
export interface ListResult<T> {
  readonly items: T[];
  readonly resourceVersion: string;
  /** Some page carried a continue token. */
  readonly paginated: boolean;
}

/**
 * Per-object work done while the list is read (a store's `prepare`, see `ReflectorStore`): called once for
 * every listed object, in list order; what it returns is gathered in the object's place.
 */
export type PrepareListItem<T> = (obj: T) => T;

/** Objects prepared between two turns of the event loop, so a page in flight is read meanwhile. */
const PREPARE_SLICE = 64;
/** Pages answered (or on their way) that the consumer has not taken yet, at most. */
const LOOKAHEAD = 2;

/**
 * client-go `tools/pager`: lists in pages of `limit` (0: unpaged) until no `continue`, gathering items with a
 * loop (never a spread, so a page of any size is fine). Later pages carry only the continue token. An expired
 * continue token gives one full list without paging at `resourceVersion=""` (client-go `FullListIfExpired`).
 *
 * With `prepare`, each page's objects go through it as the page arrives, and the request for the next page is
 * sent first (its continue token is known once the page is decoded), so the per-object work of page N is done
 * while page N+1 is on its way — as client-go's `ListPager` with a page buffer fetches ahead of its consumer.
 * The pages are still requested one after the other, in order, each only after the previous one's answer;
 * the work is done in slices with a turn of the event loop between them. When the list fails or `signal`
 * aborts, a page requested ahead is aborted.
 */
export async function pagedList<T extends KubeObject>(
  lw: ListerWatcher<T>,
  rv: string,
  limit: number,
  signal: AbortSignal,
  prepare?: PrepareListItem<T>,
): Promise<ListResult<T>> {
  const items: T[] = [];
  let listRV = '';
  let paginated = false;
  // One controller for this list's requests: a page requested ahead is aborted when the list ends early.
  const { controller: ac, release } = childController(signal);
  const request = (token: string | undefined): Promise<ObjectList<T>> =>
    lw.list({
      signal: ac.signal,
      ...(limit > 0 ? { limit } : {}),
      // Later pages carry only the continue token (a resourceVersion with continue is refused).
      ...(token ? { continue: token } : { resourceVersion: rv }),
    });
  // Pages requested and not yet taken, in order. A page's answer requests the next one at once (its continue
  // token is known), while at most LOOKAHEAD pages wait to be taken; otherwise the token is parked until the
  // consumer takes a page. A failed page requests nothing more; its error surfaces when it is taken.
  const queue: Promise<ObjectList<T>>[] = [];
  let parked: string | undefined;
  const issue = (token: string | undefined): void => {
    const p = request(token);
    queue.push(p);
    p.then(
      (page) => {
        const next = page.metadata?.continue || undefined;
        if (!next || ac.signal.aborted) return;
        if (queue.length < LOOKAHEAD) issue(next);
        else parked = next;
      },
      () => {},
    );
  };
  issue(undefined);
  try {
    for (let first = true; ; first = false) {
      let page: ObjectList<T>;
      try {
        page = await queue.shift()!;
      } catch (err) {
        if (!first && isExpired(err)) {
          // The continue token expired mid-way: one full list without paging (client-go FullListIfExpired;
          // the pager has already cleared the resourceVersion, so this reads the most recent state).
          const full = await lw.list({ signal: ac.signal, resourceVersion: '' });
          const fullItems: T[] = [];
          await gather(full.items ?? [], fullItems, prepare && reusing(items, prepare), ac.signal);
          return { items: fullItems, resourceVersion: full.metadata?.resourceVersion ?? '', paginated };
        }
        throw err;
      }
      if (parked !== undefined) {
        const token = parked;
        parked = undefined;
        issue(token);
      }
      listRV = page.metadata?.resourceVersion ?? listRV;
      const cont = page.metadata?.continue || undefined;
      if (cont) paginated = true;
      await gather(page.items ?? [], items, prepare, ac.signal);
      if (!cont) break;
    }
  } finally {
    release();
    // Pages requested ahead and not needed are cancelled; the requests done are then over and unaffected.
    ac.abort(signal.aborted ? signal.reason : new Error('list ended'));
  }
  return { items, resourceVersion: listRV, paginated };
}

/**
 * `prepare` for the full list after an expired continue token: an object of the abandoned pages listed again at
 * the same resourceVersion is the same version, so its prepared form is reused — each version is prepared
 * (transformed) once.
 */
function reusing<T extends KubeObject>(earlier: T[], prepare: PrepareListItem<T>): PrepareListItem<T> {
  const byKey = new Map<string, T>();
  for (const o of earlier) byKey.set(metaNamespaceKeyFunc(o), o);
  return (raw) => {
    const before = byKey.get(metaNamespaceKeyFunc(raw));
    const rv = raw.metadata?.resourceVersion;
    return before && rv && before.metadata?.resourceVersion === rv ? before : prepare(raw);
  };
}

/** Appends `from` (prepared, when `prepare` is given) to `to`, yielding to the event loop between slices. */
async function gather<T>(
  from: T[],
  to: T[],
  prepare: PrepareListItem<T> | undefined,
  signal: AbortSignal,
): Promise<void> {
  if (!prepare) {
    for (let i = 0; i < from.length; i++) to.push(from[i]!);
    return;
  }
  for (let i = 0; i < from.length; i++) {
    // a turn first: a page just requested is sent before the work starts
    if (i % PREPARE_SLICE === 0) {
      await nextTurn();
      // checked, not listened for: no listener per slice on the list's signal
      if (signal.aborted) throw signal.reason;
    }
    to.push(prepare(from[i]!));
  }
}
