/**
 * The collection DELETE (controller-runtime `Client.DeleteAllOf`, the API's `deletecollection` verb).
 */

import { type FieldSelectorInput, formatFieldSelector } from './field-selector.js';
import type { ClientInternals } from './internal/client-internals.js';
import { jsonBody } from './internal/json-body.js';
import type { Kind } from './kinds.js';
import { formatLabelSelector, type LabelSelectorInput } from './label-selector.js';
import type { CallOptions } from './options.js';
import { collectionPath, withQuery } from './paths.js';

/** Options of `client.deleteAllOf` (controller-runtime `DeleteAllOfOptions`: list options plus delete options). */
export interface DeleteAllOfOptions extends CallOptions {
  /**
   * Delete in this namespace. Required for a namespaced kind: kube-apiserver serves `deletecollection` only
   * on the namespaced path (405 elsewhere), so the client refuses it before sending.
   */
  readonly namespace?: string;
  /** Only objects matching this label selector. Absent: every object in scope. */
  readonly labelSelector?: LabelSelectorInput;
  /** Only objects matching this field selector. */
  readonly fieldSelector?: FieldSelectorInput;
  /** How dependents are deleted: `Orphan`, `Background` or `Foreground`. */
  readonly propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  /** Grace period, in seconds (0: at once). */
  readonly gracePeriodSeconds?: number;
  /** `dryRun=All`: report what would be deleted, delete nothing. */
  readonly dryRun?: boolean;
}

/**
 * Sends `DELETE <collection>?labelSelector=&fieldSelector=` with a DeleteOptions body. The server deletes
 * every match (objects with finalizers are marked for deletion) and answers with them; that reply is
 * returned as a list (its items are whole objects, or metadata-only when `kind` is).
 */
export async function deleteAllOf(
  internals: ClientInternals,
  kind: Kind,
  options: DeleteAllOfOptions = {},
): Promise<unknown> {
  const q = new URLSearchParams();
  const ls = formatLabelSelector(options.labelSelector);
  if (ls) q.set('labelSelector', ls);
  const fs = formatFieldSelector(options.fieldSelector);
  if (fs) q.set('fieldSelector', fs);
  const body: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1' };
  if (options.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = options.gracePeriodSeconds;
  if (options.propagationPolicy) body.propagationPolicy = options.propagationPolicy;
  if (options.dryRun) body.dryRun = ['All'];
  const use = {
    namespace: options.namespace,
    required: `${kind.kind}: deleteAllOf of a namespaced kind needs options.namespace (the API server has no cross-namespace deletecollection)`,
  };
  return internals.request<unknown>(kind, use, (m) => ({
    method: 'DELETE',
    path: withQuery(collectionPath(m, options.namespace), q),
    body: jsonBody(body),
    headers: { 'content-type': 'application/json' },
    signal: options.signal,
  }));
}
