/**
 * list: selectors, paging with continue tokens, and the resourceVersion / resourceVersionMatch rules of
 * apiserver's storage (protocol §5): NotOlderThan, Exact, and the legacy exact read of RV + limit.
 */
import { setTimeout as delay } from 'node:timers/promises';
import {
  type ApiStatusError,
  badRequest,
  expired,
  type FieldError,
  fieldInvalid,
  invalid,
  timeoutError,
} from '../errors.js';
import type { KObject, ResourceType } from '../resource-type.js';
import { compareKeys, type Entry, ExpiredError, type Snapshot, type Store } from '../store.js';
import { CONTINUE_EXPIRED, decodeContinue, encodeContinue } from './continue-token.js';
import type { ListOptions, ListResult, RegistryOps } from './types.js';

export function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(keys[mid]!, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function listOptionsInvalid(
  field: string,
  value: unknown,
  detail: string,
  forbidden = false,
): ApiStatusError {
  const err: FieldError = forbidden
    ? { type: 'FieldValueForbidden', field, detail: `Forbidden: ${detail}` }
    : fieldInvalid(field, value, detail);
  return invalid('ListOptions', 'meta.k8s.io', '', [err]);
}

/** Parse a numeric resourceVersion or answer 400 like the API server. */
export function parseRv(rv: string): number {
  if (!/^\d+$/.test(rv)) throw badRequest(`invalid resource version: ${JSON.stringify(rv)}`);
  return Number(rv);
}

/** Wait (up to 3 s like the API server) until the store reaches `rv`, else 504 Too large resource version. */
export async function waitForRv(store: Store, rv: number): Promise<void> {
  const deadline = Date.now() + 3000;
  while (store.rv < rv) {
    if (Date.now() >= deadline)
      throw timeoutError(`Too large resource version: ${rv}, current: ${store.rv}`, 1, [
        { reason: 'ResourceVersionTooLarge', message: 'Too large resource version' },
      ]);
    await delay(25);
  }
}

/**
 * List with selectors, paging and resourceVersion semantics.
 * @throws ApiStatusError 400 (selectors, continue), 410 (expired RV/continue), 422 (option validation), 504.
 */
export async function listObjects(
  reg: RegistryOps,
  rt: ResourceType,
  opts: ListOptions,
): Promise<ListResult> {
  const rvParam = opts.resourceVersion ?? '';
  const match = opts.resourceVersionMatch ?? '';
  if (match) {
    if (!rvParam)
      throw listOptionsInvalid(
        'resourceVersionMatch',
        match,
        'resourceVersionMatch is forbidden unless resourceVersion is provided',
        true,
      );
    if (opts.continueToken)
      throw listOptionsInvalid(
        'resourceVersionMatch',
        match,
        'resourceVersionMatch is forbidden when continue is provided',
        true,
      );
    if (match !== 'Exact' && match !== 'NotOlderThan')
      throw listOptionsInvalid('resourceVersionMatch', match, 'must be one of "Exact", "NotOlderThan"');
    if (match === 'Exact' && rvParam === '0')
      throw listOptionsInvalid(
        'resourceVersionMatch',
        match,
        'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        true,
      );
  }
  if (opts.continueToken && rvParam && rvParam !== '0')
    throw listOptionsInvalid(
      'resourceVersion',
      rvParam,
      'specifying resource version is not allowed when using continue',
      true,
    );
  const sel = reg.selectors(rt, opts.labelSelector, opts.fieldSelector);

  let snap: Snapshot;
  let startKey = '';
  if (opts.continueToken) {
    const tok = decodeContinue(opts.continueToken);
    startKey = tok.start;
    try {
      snap = reg.store.snapshot(rt.storageKey, tok.rv < 0 ? undefined : tok.rv);
    } catch (e) {
      if (e instanceof ExpiredError)
        throw expired(
          CONTINUE_EXPIRED,
          encodeContinue(-1, tok.start.endsWith('\u0000') ? tok.start.slice(0, -1) : tok.start),
        );
      throw e;
    }
  } else if (rvParam && rvParam !== '0') {
    const n = parseRv(rvParam);
    // kube-apiserver's legacy paging rule: a resourceVersion with a limit and no resourceVersionMatch is an
    // exact read (storage/cacher delegates it to etcd at that revision), so it returns the old state at N
    // with list RV N, or 410 when N was compacted (protocol §5, measured on 1.32).
    const limited = opts.limit !== undefined && opts.limit > 0;
    if (match === 'Exact' || (match === '' && limited)) {
      if (n > reg.store.rv) await waitForRv(reg.store, n);
      try {
        snap = reg.store.snapshot(rt.storageKey, n);
      } catch (e) {
        if (e instanceof ExpiredError) throw expired('The resourceVersion for the provided list is too old.');
        throw e;
      }
    } else {
      if (n > reg.store.rv) await waitForRv(reg.store, n);
      // served by the watch cache once it reaches n (a progress request moves it, WaitUntilFreshAndList)
      reg.store.requireFresh(rt.storageKey, n);
      snap = reg.store.snapshot(rt.storageKey);
    }
  } else {
    // a consistent list (no RV) is served by the watch cache made fresh to etcd's current revision
    // (ConsistentListFromCache, beta and on in 1.32); RV=0 takes the cache as it is
    if (!rvParam) reg.store.requireFresh(rt.storageKey, reg.store.rv);
    snap = reg.store.snapshot(rt.storageKey);
  }

  const keys = snap.keys;
  const prefix = rt.namespaced && opts.namespace ? `${opts.namespace}/` : '';
  let i = lowerBound(keys, prefix);
  if (startKey) i = Math.max(i, lowerBound(keys, startKey));
  const end = prefix ? lowerBound(keys, `${prefix.slice(0, -1)}0`) : keys.length;
  const limit = opts.limit && opts.limit > 0 && rvParam !== '0' ? opts.limit : Number.POSITIVE_INFINITY;
  const out: Entry[] = [];
  for (; i < end; i++) {
    const e = snap.get(keys[i]!);
    if (!e) continue;
    if (!sel.empty && !sel.matches(e.obj as KObject)) continue;
    if (out.length >= limit) break;
    out.push(e);
  }
  if (out.length >= limit && i < end) {
    // is there any further match?
    let more = false;
    let j = i;
    if (sel.empty) more = true;
    else
      for (; j < end; j++) {
        const e = snap.get(keys[j]!);
        if (e && sel.matches(e.obj as KObject)) {
          more = true;
          break;
        }
      }
    if (more) {
      const last = out[out.length - 1]!;
      return {
        rv: snap.rv,
        entries: out,
        continueToken: encodeContinue(snap.rv, last.key),
        ...(sel.empty ? { remainingItemCount: end - i } : {}),
      };
    }
  }
  return { rv: snap.rv, entries: out };
}
