/**
 * Serving resource requests: resolve scope and subresource, then hand the request to the handler of its
 * verb (`handlers/`: get, list, watch, create, update, patch, delete, deletecollection), as apiserver's
 * `endpoints/handlers` has one handler per verb (protocol §1, §5–§9, §11).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BUILTIN_RESOURCES } from './builtin/index.js';
import {
  ApiStatusError,
  badRequest,
  failureStatus,
  methodNotSupported,
  notFound,
  pathNotFound,
} from './errors.js';
import type { RequestContext } from './faults/index.js';
import { type HandlerEnv, type ResourceRequest, warningHeaders } from './handlers/context.js';
import { handleCreate } from './handlers/create.js';
import { handleDelete, handleDeleteCollection } from './handlers/delete.js';
import { handleGet } from './handlers/get.js';
import { handleList } from './handlers/list.js';
import { handlePatch } from './handlers/patch.js';
import {
  handleBinding,
  handleEviction,
  handlePodConnect,
  POD_CONNECT_SUBRESOURCES,
} from './handlers/pod-subresources.js';
import { handleServiceAccountToken } from './handlers/serviceaccount-token.js';
import { handleUpdate } from './handlers/update.js';
import { handleWatch } from './handlers/watch.js';
import { sendText } from './http.js';
import type { RequestInfo } from './request-info.js';
import type { ResourceType } from './resource-type.js';

export type { HandlerEnv } from './handlers/context.js';

const HANDLERS: Record<string, (r: ResourceRequest) => Promise<void>> = {
  get: handleGet,
  list: handleList,
  watch: handleWatch,
  create: handleCreate,
  update: handleUpdate,
  patch: handlePatch,
  delete: handleDelete,
  deletecollection: handleDeleteCollection,
};

/** Groups kube-apiserver serves through go-restful web services (every built-in one, and all of `/api`). */
const BUILTIN_GROUPS: ReadonlySet<string> = new Set(BUILTIN_RESOURCES.map((rt) => rt.group));

/**
 * Whether kube-apiserver's go-restful container answers a path under `/api` or `/apis/<group>`: its handler
 * director hands a path to go-restful when it lies under a registered web service's root, and every built-in
 * group has one at `/apis/<group>` (group discovery), `/api` one at `/api`. Such paths get a NotFound Status
 * when nothing matches; any other path falls through to apiextensions-apiserver and the plain-text 404.
 */
export function goRestfulServesGroup(group: string): boolean {
  return group === '' || BUILTIN_GROUPS.has(group);
}

/**
 * The 404 of a path no served resource answers, as kube-apiserver words it: under `/api` and a built-in
 * group (any version) the go-restful container answers with a NotFound Status ("the server could not find the
 * requested resource"); any other group reaches apiextensions-apiserver's CRD handler, which hands
 * it to the not-found handler: a plain-text `404 page not found`.
 */
export function answerUnknownResource(info: RequestInfo, res: ServerResponse): void {
  if (goRestfulServesGroup(info.group)) throw pathNotFound();
  sendText(res, 404, '404 page not found\n');
}

function isCorePods(rt: ResourceType): boolean {
  return rt.group === '' && rt.resource === 'pods' && rt.crdName === undefined;
}

/** The subresources envtest serves, and the HTTP methods kube-apiserver installs on each (installer.go). */
function subresourceMethods(rt: ResourceType, sub: string): readonly string[] | undefined {
  if (sub === 'status') return rt.statusSubresource ? ['GET', 'PUT', 'PATCH'] : undefined;
  if (sub === 'scale') return rt.scale ? ['GET', 'PUT', 'PATCH'] : undefined;
  if (sub === 'log') return rt.resource === 'pods' && rt.group === '' ? ['GET'] : undefined;
  if (sub === 'finalize') return rt.resource === 'namespaces' && rt.group === '' ? ['PUT'] : undefined;
  if (POD_CONNECT_SUBRESOURCES.has(sub)) return isCorePods(rt) ? ['GET', 'POST'] : undefined;
  if (sub === 'eviction' || sub === 'binding') return isCorePods(rt) ? ['POST'] : undefined;
  if (sub === 'token') return rt.group === '' && rt.resource === 'serviceaccounts' ? ['POST'] : undefined;
  return undefined;
}

/**
 * The HTTP methods apiserver's `endpoints/installer.go` registers on the path this request addresses for a
 * built-in resource, from the resource's verbs: the collection (`[namespaces/{ns}/]{resource}`) gets GET
 * (list/watch), POST (create) and DELETE (deletecollection); the all-namespaces path of a namespaced resource
 * (`/{resource}`) only GET (list/watch); an object path GET, PUT, PATCH, DELETE per its verbs; a subresource
 * its own. An empty list means no route has this path (go-restful answers 404).
 */
function installedMethods(rt: ResourceType, info: RequestInfo): readonly string[] {
  const has = (...verbs: string[]) => verbs.some((v) => rt.verbs.includes(v));
  const clusterPathOfNamespaced = rt.namespaced && info.namespace === undefined;
  if (info.subresource !== undefined) {
    if (clusterPathOfNamespaced) return [];
    return subresourceMethods(rt, info.subresource) ?? [];
  }
  const methods: string[] = [];
  if (info.name !== undefined) {
    if (clusterPathOfNamespaced) return [];
    if (has('get')) methods.push('GET');
    if (has('update')) methods.push('PUT');
    if (has('patch')) methods.push('PATCH');
    if (has('delete')) methods.push('DELETE');
    return methods;
  }
  if (has('list', 'watch')) methods.push('GET');
  if (clusterPathOfNamespaced) return methods;
  if (has('create')) methods.push('POST');
  if (has('deletecollection')) methods.push('DELETE');
  return methods;
}

/** The go-restful 405 for a path whose routes do not include this method, as kube-apiserver words it. */
function methodNotAllowed(): ApiStatusError {
  return new ApiStatusError(
    failureStatus(
      405,
      'MethodNotAllowed',
      'the server does not allow this method on the requested resource',
      {},
    ),
  );
}

/**
 * Route a built-in resource's request as kube-apiserver's go-restful routes do: a path with no route is 404
 * (a namespaced resource addressed without a namespace below its collection, a cluster-scoped one under a
 * namespace, an unserved subresource); a routed path without this method is 405 MethodNotAllowed — POST or
 * DELETE on `/api/v1/configmaps` (only list and watch are installed across namespaces), PUT on a collection,
 * POST on an object.
 */
function routeBuiltin(rt: ResourceType, info: RequestInfo, method: string): void {
  if (!rt.namespaced && info.namespace !== undefined) throw pathNotFound();
  const methods = installedMethods(rt, info);
  if (methods.length === 0) throw pathNotFound();
  if (!methods.includes(method === 'HEAD' ? 'GET' : method)) throw methodNotAllowed();
}

/**
 * Route a custom resource's request as apiextensions-apiserver's crdHandler does. A request whose scope does
 * not match the CRD's (a cluster-scoped CR under a namespace; a namespaced CR without a namespace for any verb
 * but list and watch) goes to the not-found handler: plain-text 404, so POST/DELETE on the all-namespaces path
 * are 404 here, not 405. An unserved subresource is NotFound for the object; status and scale serve get,
 * update and patch only (405 `<verb> is not supported`); PUT or PATCH on a collection is 400 "name must be
 * provided" (the namer's errEmptyName).
 * @returns false when the plain-text 404 has been sent.
 */
function routeCustom(rt: ResourceType, info: RequestInfo, res: ServerResponse): boolean {
  const namespacedReq = info.namespace !== undefined;
  if (
    (!rt.namespaced && namespacedReq) ||
    (rt.namespaced && !namespacedReq && info.verb !== 'list' && info.verb !== 'watch')
  ) {
    sendText(res, 404, '404 page not found\n');
    return false;
  }
  const sub = info.subresource;
  if (sub !== undefined) {
    if (!((sub === 'status' && rt.statusSubresource) || (sub === 'scale' && rt.scale)))
      throw notFound(rt.resource, rt.group, info.name ?? '');
    if (!['get', 'update', 'patch'].includes(info.verb))
      throw methodNotSupported(rt.resource, rt.group, info.verb);
    return true;
  }
  if ((info.verb === 'update' || info.verb === 'patch') && info.name === undefined)
    throw badRequest('name must be provided');
  return true;
}

/**
 * Handle one resource request. `rt` is the resolved resource type (the caller answered 404 otherwise).
 * @throws ApiStatusError for every refusal; the caller turns it into a Status reply.
 */
export async function handleResource(
  env: HandlerEnv,
  rt: ResourceType,
  info: RequestInfo,
  ctx: RequestContext,
  req: IncomingMessage,
  res: ServerResponse,
  q: URLSearchParams,
): Promise<void> {
  if (rt.crdName !== undefined) {
    if (!routeCustom(rt, info, res)) return;
  } else routeBuiltin(rt, info, (req.method ?? 'GET').toUpperCase());
  const sub = info.subresource;
  const podSub = rt.crdName === undefined && sub !== undefined && isCorePods(rt);
  const handler =
    podSub && POD_CONNECT_SUBRESOURCES.has(sub)
      ? handlePodConnect
      : podSub && sub === 'eviction'
        ? handleEviction
        : podSub && sub === 'binding'
          ? handleBinding
          : sub === 'token' &&
              rt.crdName === undefined &&
              rt.group === '' &&
              rt.resource === 'serviceaccounts'
            ? handleServiceAccountToken
            : HANDLERS[info.verb];
  if (!handler) throw methodNotSupported(rt.resource, rt.group, info.verb);
  const warnings: string[] = [];
  try {
    await handler({
      env,
      rt,
      info,
      ctx,
      req,
      res,
      q,
      ns: rt.namespaced ? info.namespace : undefined,
      name: info.name,
      sub,
      warnings,
    });
  } catch (e) {
    // kube-apiserver sends the warnings gathered before a refusal with it (a denying webhook's own warnings
    // reach the client as Warning headers on the 4xx, as recorded from 1.32)
    if (e instanceof ApiStatusError && warnings.length > 0)
      throw new ApiStatusError(e.status, e.httpCode, { ...e.headers, ...warningHeaders(warnings) });
    throw e;
  }
}
