/** update (PUT) of an object or its status, scale or finalize subresource. */
import { admissionActive, admitUpdate } from '../admission/handlers.js';
import { methodNotSupported } from '../errors.js';
import { contentTypeOf, decodeBody, negotiate, readBody, sendBody } from '../http.js';
import { getPath, setPath } from '../resource-type.js';
import { dryRunOf, fieldManagerOf, isObj, type ResourceRequest, warningHeaders } from './context.js';
import { decodeObject } from './decode.js';
import { toScale } from './render.js';

/** update: a full replacement with an optimistic-concurrency resourceVersion. */
export async function handleUpdate(r: ResourceRequest): Promise<void> {
  const { rt, req, res, q, ns, name, sub, warnings } = r;
  const { registry } = r.env;
  if (name === undefined) throw methodNotSupported(rt.resource, rt.group, 'update');
  const fmt = negotiate(String(req.headers.accept ?? ''), {});
  const opts = {
    dryRun: dryRunOf(q),
    fieldManager: fieldManagerOf(req, q),
    ...(sub ? { subresource: sub } : {}),
  };
  if (sub === 'scale') {
    const body = decodeBody(
      await readBody(req),
      contentTypeOf(req),
      'Scale in version "v1" cannot be handled as a Scale',
    );
    const replicas = getPath(body, 'spec.replicas');
    const rv = getPath(body, 'metadata.resourceVersion');
    const obj = registry.patch(
      rt,
      ns,
      name,
      (cur) => {
        setPath(cur, rt.scale!.specReplicasPath, Number(replicas ?? 0));
        const m = cur.metadata as Record<string, unknown>;
        if (rv) m.resourceVersion = rv;
        else delete m.resourceVersion;
        return cur;
      },
      { ...opts, subresource: 'scale' },
    );
    sendBody(res, 200, toScale(rt, obj), fmt);
    return;
  }
  if (sub === 'finalize') {
    const body = decodeObject(rt, req, await readBody(req), q, warnings);
    const obj = registry.patch(
      rt,
      ns,
      name,
      (cur) => {
        cur.spec = isObj(body.spec) ? body.spec : {};
        return cur;
      },
      { ...opts, subresource: undefined },
    );
    sendBody(res, 200, obj, fmt);
    return;
  }
  const decoded = decodeObject(rt, req, await readBody(req), q, warnings);
  const body = admissionActive(r) ? await admitUpdate(r, name, decoded, opts) : decoded;
  const { object, created } = registry.update(rt, ns, name, body, opts);
  sendBody(res, created ? 201 : 200, object, fmt, warningHeaders(warnings));
  return;
}
