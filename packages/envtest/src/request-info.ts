/** Parsing a request URL into what it addresses (apiserver's RequestInfo). */
import type { ResourceType } from './resource-type.js';

export interface RequestInfo {
  readonly isResourceRequest: boolean;
  readonly verb: string;
  readonly group: string;
  readonly version: string;
  readonly resource?: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
  /** Remaining path parts after the API prefix (`/api/v1` or `/apis/g/v`). */
  readonly parts: readonly string[];
}

/** Resolves a served resource by group/version/plural. */
export type ResourceLookup = (group: string, version: string, resource: string) => ResourceType | undefined;

/** Parse `path` for `method`. Non-resource paths return `isResourceRequest: false`. */
export function parseRequestInfo(
  method: string,
  path: string,
  query: URLSearchParams,
  lookup: ResourceLookup,
): RequestInfo {
  const segs = path.split('/').filter(Boolean).map(decodeURIComponent);
  const nonResource: RequestInfo = {
    isResourceRequest: false,
    verb: 'nonresource',
    group: '',
    version: '',
    parts: segs,
  };
  let group = '';
  let version = '';
  let rest: string[];
  if (segs[0] === 'api' && segs.length >= 3) {
    version = segs[1]!;
    rest = segs.slice(2);
  } else if (segs[0] === 'apis' && segs.length >= 4) {
    group = segs[1]!;
    version = segs[2]!;
    rest = segs.slice(3);
  } else return nonResource;
  let namespace: string | undefined;
  // namespaced paths: namespaces/{ns}/{resource}/... — unless it addresses a namespace object's subresource
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const rt = lookup(group, version, rest[2]!);
    if (rt?.namespaced || group !== '' || version !== 'v1' || !['status', 'finalize'].includes(rest[2]!)) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
  }
  const [resource, name, subresource, ...extra] = rest;
  if (extra.length > 0 || resource === undefined) return { ...nonResource, parts: segs };
  const watch = query.get('watch') === 'true' || query.get('watch') === '1';
  let verb: string;
  switch (method) {
    case 'GET':
    case 'HEAD':
      verb = name === undefined ? (watch ? 'watch' : 'list') : 'get';
      break;
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name === undefined ? 'deletecollection' : 'delete';
      break;
    default:
      verb = method.toLowerCase();
  }
  return {
    isResourceRequest: true,
    verb,
    group,
    version,
    resource,
    ...(subresource !== undefined ? { subresource } : {}),
    ...(namespace !== undefined ? { namespace } : {}),
    ...(name !== undefined ? { name } : {}),
    parts: rest,
  };
}
