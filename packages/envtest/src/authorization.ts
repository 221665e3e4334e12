/**
 * Test-only authorization: the restrictions a token may carry (`TokenOptions`) — namespaces and required field
 * selectors — answered with 403 Forbidden worded as the RBAC authorizer's denials.
 */
import { fieldSelectorsSatisfied, nameSatisfies, type UserInfo } from './auth.js';
import { forbidden } from './errors.js';
import type { RequestInfo } from './request-info.js';
import type { ResourceType } from './resource-type.js';

/**
 * Refuse a request outside the user's token restrictions (call only when `user.restrictions` is set).
 * @throws ApiStatusError 403 Forbidden naming the restriction.
 */
export function authorizeRestricted(
  user: UserInfo,
  info: RequestInfo,
  rt: ResourceType,
  q: URLSearchParams,
): void {
  const r = user.restrictions!;
  const deny = (why: string) =>
    forbidden(
      user.name,
      info.verb,
      rt.resource,
      rt.group,
      rt.namespaced ? info.namespace : undefined,
      info.name,
      info.subresource,
      why,
    );
  if (r.namespaces) {
    const ns = rt.namespaced ? info.namespace : undefined;
    if (!ns || !r.namespaces.includes(ns))
      throw deny(`access is restricted to namespaces ${r.namespaces.join(', ')}`);
  }
  if (r.fieldSelectors && r.fieldSelectors.length > 0) {
    if (info.name !== undefined) {
      if (!nameSatisfies(r.fieldSelectors, info.name))
        throw deny(`access is restricted to ${r.fieldSelectors.join(',')}`);
    } else if (info.verb === 'list' || info.verb === 'watch' || info.verb === 'deletecollection') {
      if (!fieldSelectorsSatisfied(r.fieldSelectors, q.get('fieldSelector')))
        throw deny(`the request must use fieldSelector ${r.fieldSelectors.join(',')}`);
    }
  }
}
