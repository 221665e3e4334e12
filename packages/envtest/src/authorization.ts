/**
 * Test-only authorization: the restrictions a token may carry (`TokenOptions`) — namespaces and required field
 * selectors — answered with 403 Forbidden worded as the RBAC authorizer's denials.
 */
import { fieldSelectorsSatisfied, nameSatisfies, type UserInfo } from './auth.js';
import { type ApiStatusError, forbidden } from './errors.js';
import type { RequestInfo } from './request-info.js';
import type { ResourceType } from './resource-type.js';
import { authorize, type ReviewEnv } from './reviews.js';

/** The 403 of a request the user may not make, worded as the RBAC authorizer's denials. */
function denial(user: UserInfo, info: RequestInfo, rt: ResourceType, why?: string): ApiStatusError {
  return forbidden(
    user.name,
    info.verb,
    rt.resource,
    rt.group,
    rt.namespaced ? info.namespace : undefined,
    info.name,
    info.subresource,
    why,
  );
}

/**
 * The RBAC authorizer on a resource request (`authorization: 'RBAC'`): the user's bindings must allow the verb on
 * the resource (see {@link authorize}). @throws ApiStatusError 403 Forbidden.
 */
export async function authorizeRBAC(
  env: ReviewEnv,
  user: UserInfo,
  info: RequestInfo,
  rt: ResourceType,
): Promise<void> {
  const allowed = await authorize(env, {
    user: user.name,
    groups: user.groups,
    verb: info.verb,
    group: rt.group,
    resource: rt.resource,
    ...(info.subresource ? { subresource: info.subresource } : {}),
    ...(rt.namespaced && info.namespace ? { namespace: info.namespace } : {}),
    ...(info.name ? { name: info.name } : {}),
  });
  if (!allowed) throw denial(user, info, rt);
}

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
  const deny = (why: string) => denial(user, info, rt, why);
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
