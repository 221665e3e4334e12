/** What the server knows about a request before it serves it: whether it needs a user, and its context. */
import type { RequestContext } from './faults/index.js';
import type { RequestInfo } from './request-info.js';

const PUBLIC_PATHS = new Set(['/version', '/healthz', '/livez', '/readyz']);

/** Paths served without authentication (kube-apiserver's `system:public-info-viewer` paths and health checks). */
export function isPublicPath(path: string): boolean {
  return (
    PUBLIC_PATHS.has(path) ||
    path.startsWith('/healthz/') ||
    path.startsWith('/livez/') ||
    path.startsWith('/readyz/')
  );
}

/** The request as the fault rules and the request log see it: method, path, query, verb and what it addresses. */
export function requestContext(
  id: number,
  method: string,
  path: string,
  query: URLSearchParams,
  info: RequestInfo,
): RequestContext {
  return {
    id,
    method,
    path,
    query,
    verb: info.verb,
    ...(info.isResourceRequest
      ? {
          group: info.group,
          version: info.version,
          resource: info.resource,
          ...(info.subresource !== undefined ? { subresource: info.subresource } : {}),
          ...(info.namespace !== undefined ? { namespace: info.namespace } : {}),
          ...(info.name !== undefined ? { name: info.name } : {}),
        }
      : {}),
  };
}
