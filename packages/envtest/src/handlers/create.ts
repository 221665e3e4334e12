/** create (POST on a collection; for a custom resource also on an object path, as apiextensions-apiserver). */
import { admissionActive, admitCreate } from '../admission/handlers.js';
import { negotiate, readBody, sendBody } from '../http.js';
import { apiVersionOf } from '../resource-type.js';
import { reviewStatus } from '../reviews.js';
import { dryRunOf, fieldManagerOf, type ResourceRequest, warningHeaders } from './context.js';
import { decodeObject } from './decode.js';

/** create: decode, validate fields, store; 201 with the stored object. */
export async function handleCreate(r: ResourceRequest): Promise<void> {
  const { rt, req, res, q, ns, warnings } = r;
  const { registry } = r.env;
  // POST on an object path: routing answered 405 for built-ins; apiextensions-apiserver creates a custom
  // resource from the body (the name in the path is not used), so it goes on here
  const fmt = negotiate(String(req.headers.accept ?? ''), {});
  const body = decodeObject(rt, req, await readBody(req), q, warnings);
  if (rt.ephemeral) {
    // a review kind: the server evaluates it and answers with it; nothing is stored (no name, no RV)
    const { kind: _k, apiVersion: _a, ...rest } = body;
    const metadata = { ...(body.metadata ?? {}), creationTimestamp: null };
    const status =
      (r.env.reviews ? await reviewStatus(r.env.reviews, rt, body) : undefined) ?? rest.status ?? {};
    sendBody(res, 201, { kind: rt.kind, apiVersion: apiVersionOf(rt), ...rest, metadata, status }, fmt);
    return;
  }
  const writeOpts = { dryRun: dryRunOf(q), fieldManager: fieldManagerOf(req, q) };
  const admitted = admissionActive(r) ? await admitCreate(r, body, writeOpts) : body;
  const obj = registry.create(rt, ns, admitted, writeOpts);
  sendBody(res, 201, obj, fmt, warningHeaders(warnings));
  return;
}
