/** delete and deletecollection, with DeleteOptions from the body or the query (protocol §8). */
import { admissionActive, admitDelete } from '../admission/handlers.js';
import { IMMORTAL_NAMESPACES } from '../builtin/namespaces.js';
import { badRequest, forbiddenBy, invalid, methodNotSupported } from '../errors.js';
import { contentTypeOf, decodeBody, negotiate, readBody, sendBody } from '../http.js';
import type { DeleteOptions } from '../registry.js';
import { apiVersionOf } from '../resource-type.js';
import { dryRunOf, isObj, type ResourceRequest, warningHeaders } from './context.js';

export function parseDeleteOptions(body: unknown, q: URLSearchParams): DeleteOptions {
  const b = isObj(body) ? body : {};
  const pre = isObj(b.preconditions) ? b.preconditions : {};
  const dryRunBody = Array.isArray(b.dryRun) ? b.dryRun : [];
  for (const v of dryRunBody)
    if (v !== 'All') throw badRequest(`Invalid dry run value: ${JSON.stringify(v)}; supported values: "All"`);
  const grace =
    b.gracePeriodSeconds ??
    (q.get('gracePeriodSeconds') !== null ? Number(q.get('gracePeriodSeconds')) : undefined);
  const propagation = b.propagationPolicy ?? q.get('propagationPolicy') ?? undefined;
  if (propagation !== undefined && !['Orphan', 'Background', 'Foreground'].includes(String(propagation)))
    throw invalid('DeleteOptions', 'meta.k8s.io', '', [
      {
        type: 'FieldValueNotSupported',
        field: 'propagationPolicy',
        detail: `Unsupported value: ${JSON.stringify(propagation)}: supported values: "Foreground", "Background", "Orphan", "nil"`,
      },
    ]);
  return {
    preconditions: {
      ...(typeof pre.uid === 'string' ? { uid: pre.uid } : {}),
      ...(typeof pre.resourceVersion === 'string' ? { resourceVersion: pre.resourceVersion } : {}),
    },
    ...(propagation !== undefined ? { propagationPolicy: String(propagation) } : {}),
    ...(typeof grace === 'number' && !Number.isNaN(grace) ? { gracePeriodSeconds: grace } : {}),
    dryRun: dryRunBody.length > 0 || dryRunOf(q),
  };
}

/** delete: one object. */
export async function handleDelete(r: ResourceRequest): Promise<void> {
  const { rt, req, res, q, ns, name, sub } = r;
  const { registry } = r.env;
  if (sub !== undefined) throw methodNotSupported(rt.resource, rt.group, 'delete');
  const fmt = negotiate(String(req.headers.accept ?? ''), {});
  const raw = await readBody(req);
  const body = raw.length
    ? decodeBody(raw, contentTypeOf(req) || 'application/json', 'DeleteOptions')
    : undefined;
  const opts = parseDeleteOptions(body, q);
  if (rt.group === '' && rt.resource === 'namespaces' && IMMORTAL_NAMESPACES.has(name!)) {
    // NamespaceLifecycle admission, which the namespace storage runs once it has read the object: a missing
    // namespace is still 404, an immortal one is refused even with dryRun
    registry.get(rt, undefined, name!);
    throw forbiddenBy('namespaces', '', name, 'this namespace may not be deleted');
  }
  if (admissionActive(r)) await admitDelete(r, name!, !!opts.dryRun);
  const result = registry.delete(rt, ns, name!, opts);
  sendBody(res, 200, result.object ?? result.status, fmt, warningHeaders(r.warnings));
  return;
}

/** deletecollection: every object matching the selectors. */
export async function handleDeleteCollection(r: ResourceRequest): Promise<void> {
  const { rt, req, res, q, ns } = r;
  const { registry } = r.env;
  if (!rt.verbs.includes('deletecollection'))
    throw methodNotSupported(rt.resource, rt.group, 'deletecollection');
  const fmt = negotiate(String(req.headers.accept ?? ''), {});
  const raw = await readBody(req);
  const body = raw.length
    ? decodeBody(raw, contentTypeOf(req) || 'application/json', 'DeleteOptions')
    : undefined;
  const { rv, items } = await registry.deleteCollection(
    rt,
    { namespace: ns, labelSelector: q.get('labelSelector'), fieldSelector: q.get('fieldSelector') },
    parseDeleteOptions(body, q),
  );
  sendBody(
    res,
    200,
    {
      kind: rt.listKind,
      apiVersion: apiVersionOf(rt),
      metadata: { resourceVersion: String(rv) },
      // list items carry no kind/apiVersion on the server (custom resources' unstructured lists do)
      items: rt.listItemsHaveTypeMeta ? items : items.map(({ kind: _k, apiVersion: _a, ...rest }) => rest),
    },
    fmt,
  );
  return;
}
