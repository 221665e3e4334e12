/** patch: JSON patch, merge patch, strategic merge patch and server-side apply (protocol §7). */
import { admissionActive, admitApply, admitPatch } from '../admission/handlers.js';
import {
  ApiStatusError,
  badRequest,
  failureStatus,
  invalid,
  methodNotSupported,
  unsupportedMediaType,
} from '../errors.js';
import { applyFieldValidation, fieldValidationMode } from '../field-validation.js';
import { contentTypeOf, decodeBody, negotiate, readBody, sendBody } from '../http.js';
import { jsonPatch, mergePatch, strategicMergePatch } from '../patch.js';
import { getPath, type KObject, type ResourceType, setPath } from '../resource-type.js';
import { dryRunOf, fieldManagerOf, isObj, type ResourceRequest, warningHeaders } from './context.js';
import { bytesErrorOf } from './decode.js';
import { toScale } from './render.js';

export const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];

/** patch: every patch type, on the object or its status/scale subresource. */
export async function handlePatch(r: ResourceRequest): Promise<void> {
  const { rt, req, res, q, ns, name, sub, warnings } = r;
  const { registry } = r.env;
  if (name === undefined) throw methodNotSupported(rt.resource, rt.group, 'patch');
  const fmt = negotiate(String(req.headers.accept ?? ''), {});
  const ct = contentTypeOf(req);
  const accepted = rt.strategicMergeKeys ? PATCH_TYPES : PATCH_TYPES.filter((t) => !t.includes('strategic'));
  if (!PATCH_TYPES.includes(ct))
    throw new ApiStatusError(failureStatus(415, 'UnsupportedMediaType', '415: Unsupported Media Type', {}));
  if (!accepted.includes(ct)) throw unsupportedMediaType(accepted);
  const raw = await readBody(req);
  const patch = decodeBody(raw, ct, 'error decoding patch');
  const force = q.get('force');
  const isApply = ct === 'application/apply-patch+yaml';
  if (force !== null && !isApply)
    throw invalid('PatchOptions', 'meta.k8s.io', '', [
      {
        type: 'FieldValueForbidden',
        field: 'force',
        detail: 'Forbidden: may not be specified for non-apply patch',
      },
    ]);
  const dryRun = dryRunOf(q);
  if (isApply) {
    if (!q.get('fieldManager'))
      throw invalid('PatchOptions', 'meta.k8s.io', '', [
        {
          type: 'FieldValueRequired',
          field: 'fieldManager',
          detail: 'Required value: is required for apply patch',
        },
      ]);
    if (!isObj(patch)) throw badRequest('error decoding YAML: the apply patch must be an object');
    applyFieldValidation(rt, patch as KObject, q, warnings);
    if (sub === 'scale') throw methodNotSupported(rt.resource, rt.group, 'apply to scale');
    const applyOpts = {
      dryRun,
      fieldManager: fieldManagerOf(req, q),
      force: force === 'true' || force === '1',
      ...(sub ? { subresource: sub } : {}),
    };
    const { object, created } = admissionActive(r)
      ? await admitApply(
          r,
          name,
          (dry) =>
            registry.apply(rt, ns, name, structuredClone(patch) as KObject, {
              ...applyOpts,
              dryRun: dry || dryRun,
            }),
          applyOpts,
        )
      : registry.apply(rt, ns, name, patch as KObject, applyOpts);
    sendBody(res, created ? 201 : 200, object, fmt, warningHeaders(warnings));
    return;
  }
  const opts = {
    dryRun,
    fieldManager: fieldManagerOf(req, q),
    ...(sub ? { subresource: sub } : {}),
  };
  const applyPatch = (doc: KObject): KObject => {
    if (ct === 'application/json-patch+json') return jsonPatch(doc, patch, fieldValidationMode(q));
    if (ct === 'application/merge-patch+json') return mergePatch(doc, patch) as KObject;
    return strategicMergePatch(rt, doc, patch) as KObject;
  };
  if (sub === 'scale') {
    const obj = registry.patch(
      rt,
      ns,
      name,
      (cur) => {
        const scale = applyPatch(toScale(rt, cur) as KObject);
        setPath(cur, rt.scale!.specReplicasPath, Number(getPath(scale, 'spec.replicas') ?? 0));
        const rv = getPath(scale, 'metadata.resourceVersion');
        const m = cur.metadata as Record<string, unknown>;
        if (rv !== m.resourceVersion && rv !== undefined) m.resourceVersion = rv;
        else delete m.resourceVersion;
        return cur;
      },
      opts,
    );
    sendBody(res, 200, toScale(rt, obj), fmt);
    return;
  }
  const patchFn = (cur: KObject): KObject => {
    const rvBefore = (cur.metadata as Record<string, unknown>).resourceVersion;
    const out = applyPatch(cur);
    const m = isObj(out.metadata) ? out.metadata : {};
    // an RV that the patch did not touch is not a precondition
    if (m.resourceVersion === rvBefore && !JSON.stringify(patch).includes('resourceVersion'))
      delete m.resourceVersion;
    refuseBadBytes(rt, out);
    applyFieldValidation(rt, out, q, warnings);
    return out;
  };
  if (admissionActive(r)) {
    sendBody(res, 200, await admitPatch(r, name, patchFn, opts), fmt, warningHeaders(warnings));
    return;
  }
  const obj = registry.patch(rt, ns, name, patchFn, opts);
  sendBody(res, 200, obj, fmt, warningHeaders(warnings));
  return;
}

/**
 * A patched object whose `format: byte` field is not base64 fails to decode into the typed object: the patch
 * handler answers 422 with one `patch` cause holding the patched JSON (apiserver `patcher.applyPatch` →
 * `field.Invalid(field.NewPath("patch"), patchedJS, err)`, with an empty kind and name).
 */
function refuseBadBytes(rt: ResourceType, out: KObject): void {
  const bytesError = bytesErrorOf(rt, out);
  if (!bytesError) return;
  throw invalid('', '', '', [
    {
      field: 'patch',
      type: 'FieldValueInvalid',
      detail: `Invalid value: ${JSON.stringify(JSON.stringify(out))}: ${bytesError}`,
    },
  ]);
}
