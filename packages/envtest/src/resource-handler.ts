/**
 * Serving resource requests: resolve scope and subresource, then hand the request to the handler of its
 * verb (`handlers/`: get, list, watch, create, update, patch, delete, deletecollection), as apiserver's
 * `endpoints/handlers` has one handler per verb (protocol §1, §5–§9, §11).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiStatusError, failureStatus, methodNotSupported } from './errors.js';
import type { RequestContext } from './faults/index.js';
import type { HandlerEnv, ResourceRequest } from './handlers/context.js';
import { handleCreate } from './handlers/create.js';
import { handleDelete, handleDeleteCollection } from './handlers/delete.js';
import { handleGet } from './handlers/get.js';
import { handleList } from './handlers/list.js';
import { handlePatch } from './handlers/patch.js';
import { handleUpdate } from './handlers/update.js';
import { handleWatch } from './handlers/watch.js';
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

function notFoundResource(): ApiStatusError {
  return new ApiStatusError(
    failureStatus(404, 'NotFound', 'the server could not find the requested resource', {}),
  );
}

/** Does `rt` serve this subresource? */
function servesSubresource(rt: ResourceType, sub: string): boolean {
  if (sub === 'status') return !!rt.statusSubresource;
  if (sub === 'scale') return !!rt.scale;
  if (sub === 'log') return rt.resource === 'pods' && rt.group === '';
  if (sub === 'finalize') return rt.resource === 'namespaces' && rt.group === '';
  return false;
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
  // a cluster-scoped resource addressed under a namespace
  if (!rt.namespaced && info.namespace !== undefined) throw notFoundResource();
  const sub = info.subresource;
  if (sub !== undefined && !servesSubresource(rt, sub)) throw notFoundResource();
  const handler = HANDLERS[info.verb];
  if (!handler) throw methodNotSupported(rt.resource, rt.group, info.verb);
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
    warnings: [],
  });
}
