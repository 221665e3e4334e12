import { InvalidRequestError } from '../errors.js';
import { formatFieldSelector } from '../field-selector.js';
import type { Kind } from '../kinds.js';
import { formatLabelSelector } from '../label-selector.js';
import type { DeleteOptions, ListOptions } from '../options.js';

/**
 * The query of a list request: selectors, paging and resourceVersion semantics as apimachinery's
 * `ListOptions` puts them on the wire.
 * @throws InvalidRequestError for a `limit` that is not a whole number >= 0.
 */
export function listQuery(kind: Kind, options: ListOptions): URLSearchParams {
  const q = new URLSearchParams();
  const ls = formatLabelSelector(options.labelSelector);
  if (ls) q.set('labelSelector', ls);
  const fs = formatFieldSelector(options.fieldSelector);
  if (fs) q.set('fieldSelector', fs);
  if (options.limit !== undefined) {
    // 0 means "no limit" on the wire (apimachinery); anything else that is not a whole number is a mistake.
    if (!Number.isSafeInteger(options.limit) || options.limit < 0)
      throw new InvalidRequestError(
        `list ${kind.kind}: limit must be a whole number >= 0 (0 = unpaged), got ${options.limit}`,
      );
    if (options.limit > 0) q.set('limit', String(options.limit));
  }
  if (options.continue) q.set('continue', options.continue);
  if (options.resourceVersion !== undefined) q.set('resourceVersion', options.resourceVersion);
  if (options.resourceVersionMatch) q.set('resourceVersionMatch', options.resourceVersionMatch);
  return q;
}

/** The `DeleteOptions` body of a delete request, or undefined when no option is set (no body is sent). */
export function deleteBody(options: DeleteOptions | undefined): Record<string, unknown> | undefined {
  const body: Record<string, unknown> = {};
  if (options?.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = options.gracePeriodSeconds;
  if (options?.propagationPolicy) body.propagationPolicy = options.propagationPolicy;
  if (options?.preconditions) body.preconditions = options.preconditions;
  if (options?.dryRun) body.dryRun = ['All'];
  return Object.keys(body).length > 0 ? body : undefined;
}
