/** list: selectors, paging and resourceVersion rules (in the registry), rendered as JSON (streamed), YAML, Table or PartialObjectMetadataList. */

import type { ServerResponse } from 'node:http';
import { invalid, methodNotSupported } from '../errors.js';
import { baseHeaders, negotiate, sendBody } from '../http.js';
import { apiVersionOf, type KObject, type ResourceType } from '../resource-type.js';
import type { Entry } from '../store.js';
import { buildTable, type IncludeObject } from '../table.js';
import type { HandlerEnv, ResourceRequest } from './context.js';

/** list: one page of a collection. */
export async function handleList(r: ResourceRequest): Promise<void> {
  const { env, rt, req, res, q, ns, sub } = r;
  const { registry } = r.env;
  if (sub !== undefined) throw methodNotSupported(rt.resource, rt.group, 'list');
  if (q.get('sendInitialEvents') !== null)
    throw invalid('ListOptions', 'meta.k8s.io', '', [
      {
        type: 'FieldValueForbidden',
        field: 'sendInitialEvents',
        detail: 'Forbidden: sendInitialEvents is forbidden for list',
      },
    ]);
  const fmt = negotiate(String(req.headers.accept ?? ''), { table: true, partial: true });
  const limitRaw = q.get('limit');
  const limit = limitRaw !== null && /^\d+$/.test(limitRaw) ? Number(limitRaw) : undefined;
  const result = await registry.list(rt, {
    namespace: ns,
    labelSelector: q.get('labelSelector'),
    fieldSelector: q.get('fieldSelector'),
    limit,
    continueToken: q.get('continue'),
    resourceVersion: q.get('resourceVersion'),
    resourceVersionMatch: q.get('resourceVersionMatch'),
  });
  // unstructured (custom resource) lists always carry `continue`, and before resourceVersion
  const listMeta: Record<string, unknown> =
    rt.crdName !== undefined && fmt.kind === 'json'
      ? { continue: result.continueToken ?? '', resourceVersion: String(result.rv) }
      : { resourceVersion: String(result.rv) };
  if (result.continueToken) listMeta.continue = result.continueToken;
  if (result.remainingItemCount !== undefined) listMeta.remainingItemCount = result.remainingItemCount;
  if (fmt.kind === 'table') {
    const include = (q.get('includeObject') ?? 'Metadata') as IncludeObject;
    const objs = result.entries.map((e) => registry.view(rt, e) as KObject);
    sendBody(res, 200, buildTable(rt, objs, listMeta, include), fmt);
  } else if (fmt.kind === 'partial') {
    sendBody(
      res,
      200,
      {
        kind: 'PartialObjectMetadataList',
        apiVersion: 'meta.k8s.io/v1',
        metadata: listMeta,
        items: result.entries.map((e) => ({
          kind: 'PartialObjectMetadata',
          apiVersion: 'meta.k8s.io/v1',
          metadata: registry.view(rt, e).metadata,
        })),
      },
      fmt,
    );
  } else if (fmt.kind === 'json') await streamListJson(env, rt, result.entries, listMeta, res);
  else
    sendBody(
      res,
      200,
      {
        kind: rt.listKind,
        apiVersion: apiVersionOf(rt),
        metadata: listMeta,
        items: result.entries.map((e) => JSON.parse(itemJson(env, rt, e))),
      },
      fmt,
    );
  return;
}

export function itemJson(env: HandlerEnv, rt: ResourceType, e: Entry): string {
  if (rt.fromStorage) {
    const v = env.registry.view(rt, e);
    if (rt.listItemsHaveTypeMeta) return JSON.stringify(v);
    const { kind: _k, apiVersion: _a, ...rest } = v;
    return JSON.stringify(rest);
  }
  return rt.listItemsHaveTypeMeta ? e.json : e.itemJson;
}

/**
 * Write a JSON list as a chunked stream, items in batches, honouring backpressure: the items' JSON is
 * each object's cached encoding (built once per object version), so a large list costs one pass.
 */
export async function streamListJson(
  env: HandlerEnv,
  rt: ResourceType,
  entries: readonly Entry[],
  listMeta: Record<string, unknown>,
  res: ServerResponse,
): Promise<void> {
  res.writeHead(200, { ...baseHeaders(), 'Content-Type': 'application/json' });
  const head = `{"kind":${JSON.stringify(rt.listKind)},"apiVersion":${JSON.stringify(apiVersionOf(rt))},"metadata":${JSON.stringify(listMeta)},"items":[`;
  let buf = head;
  for (let i = 0; i < entries.length; i++) {
    buf += (i > 0 ? ',' : '') + itemJson(env, rt, entries[i]!);
    if (buf.length >= 256 * 1024) {
      if (res.destroyed) return;
      const ok = res.write(buf);
      buf = '';
      if (!ok)
        await new Promise<void>((r) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            r();
          };
          res.on('drain', done);
          res.on('close', done);
        });
    }
  }
  res.end(`${buf}]}`);
}
