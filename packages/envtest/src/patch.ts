/**
 * Patch application: RFC 7386 JSON merge patch, RFC 6902 JSON patch (fast-json-patch) and strategic merge
 * patch with the list merge keys of the served built-in kinds (protocol §7).
 */
import fastJsonPatch from 'fast-json-patch';
import { ApiStatusError, badRequest, failureStatus } from './errors.js';
import type { KObject, ResourceType } from './resource-type.js';

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** RFC 7386: objects merge recursively, `null` deletes, everything else (arrays too) replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** The most operations one JSON patch may hold (apiserver `maxJSONPatchOperations`). */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;

/** How Go's encoding/json names a JSON value's type in an UnmarshalTypeError. */
function goJsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  return typeof v === 'object' ? 'object' : typeof v;
}

/**
 * Decode a JSON patch document as apiserver's jsonPatcher does before applying it. With fieldValidation
 * Strict or Warn (the default) the body is first decoded strictly into `[]handlers.jsonPatchOp`, so a
 * document that is not a list of objects with string `op`/`path`/`from` is 400 `error decoding patch: json:
 * cannot unmarshal …`; with Ignore only json-patch's `DecodePatch` runs (`jsonpatch.Patch` of
 * `jsonpatch.Operation` maps) and a bad field value is left for apply. More than 10000 operations is 413.
 */
function decodeJsonPatch(ops: unknown, validation: 'Strict' | 'Warn' | 'Ignore'): unknown[] {
  if (ops === null) return [];
  const strict = validation !== 'Ignore';
  const fail = (what: string) =>
    badRequest(
      strict ? `error decoding patch: json: cannot unmarshal ${what}` : `json: cannot unmarshal ${what}`,
    );
  if (!Array.isArray(ops))
    throw fail(
      `${goJsonType(ops)} into Go value of type ${strict ? '[]handlers.jsonPatchOp' : 'jsonpatch.Patch'}`,
    );
  for (const op of ops) {
    if (op === null) continue;
    if (typeof op !== 'object' || Array.isArray(op))
      throw fail(
        `${goJsonType(op)} into Go value of type ${strict ? 'handlers.jsonPatchOp' : 'jsonpatch.Operation'}`,
      );
    if (!strict) continue;
    for (const field of ['op', 'path', 'from']) {
      const v = (op as Record<string, unknown>)[field];
      if (v !== undefined && v !== null && typeof v !== 'string')
        throw fail(`${goJsonType(v)} into Go struct field jsonPatchOp.${field} of type string`);
    }
  }
  if (ops.length > MAX_JSON_PATCH_OPERATIONS)
    throw new ApiStatusError(
      failureStatus(
        413,
        'RequestEntityTooLarge',
        `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${ops.length}`,
        undefined,
      ),
    );
  return ops;
}

/**
 * RFC 6902 JSON patch, answered as apiserver's jsonPatcher answers it: a document that does not decode is 400
 * (see {@link decodeJsonPatch}); any failure to apply it — a `test` that does not match, a missing path, an
 * unknown op — is the generic 422 of `NewGenericServerResponse(422, …)`: reason Invalid, message "the server
 * rejected our request due to an error in our request", empty details (json-patch's own error text is dropped).
 * @param validation the request's fieldValidation (default Warn, as the server's).
 */
export function jsonPatch(
  target: KObject,
  ops: unknown,
  validation: 'Strict' | 'Warn' | 'Ignore' = 'Warn',
): KObject {
  const decoded = decodeJsonPatch(ops, validation);
  const doc = structuredClone(target);
  try {
    const res = fastJsonPatch.applyPatch(doc, decoded as fastJsonPatch.Operation[], true, true, false);
    return res.newDocument as KObject;
  } catch {
    throw new ApiStatusError(
      failureStatus(422, 'Invalid', 'the server rejected our request due to an error in our request', {}),
    );
  }
}

/**
 * Strategic merge patch: a merge patch in which lists with a known merge key merge element-wise by key,
 * primitive set lists (finalizers) merge as sets, and `$patch`, `$retainKeys`, `$setElementOrder/…` and
 * `$deleteFromPrimitiveList/…` directives are honoured (order hints are ignored).
 */
export function strategicMergePatch(rt: ResourceType, target: unknown, patch: unknown): unknown {
  return smp(rt, target, patch, '');
}

function smp(rt: ResourceType, target: unknown, patch: unknown, path: string): unknown {
  if (!isObj(patch)) return structuredClone(patch);
  if (patch.$patch === 'replace') {
    const { $patch: _p, ...rest } = patch;
    return stripDirectives(rest);
  }
  if (patch.$patch === 'delete') return undefined;
  const out: Record<string, unknown> = isObj(target) ? { ...target } : {};
  const retain = Array.isArray(patch.$retainKeys) ? (patch.$retainKeys as string[]) : undefined;
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$retainKeys' || k === '$patch') continue;
    if (k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const cur = out[field];
      if (Array.isArray(cur) && Array.isArray(v)) out[field] = cur.filter((x) => !v.includes(x));
      continue;
    }
    const sub = path ? `${path}.${k}` : k;
    if (v === null) {
      delete out[k];
      continue;
    }
    if (Array.isArray(v)) {
      out[k] = mergeList(rt, out[k], v, sub);
      continue;
    }
    if (isObj(v)) {
      const merged = smp(rt, out[k], v, sub);
      if (merged === undefined) delete out[k];
      else out[k] = merged;
      continue;
    }
    out[k] = v;
  }
  if (retain) for (const k of Object.keys(out)) if (!retain.includes(k)) delete out[k];
  return out;
}

function stripDirectives(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObj(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (!k.startsWith('$')) out[k] = stripDirectives(x);
  return out;
}

function mergeList(rt: ResourceType, target: unknown, patch: unknown[], path: string): unknown[] {
  const key = rt.strategicMergeKeys?.[path];
  const cur = Array.isArray(target) ? [...target] : [];
  // a list-level `$patch: replace` element
  const replace = patch.find((e) => isObj(e) && e.$patch === 'replace');
  if (replace) return patch.filter((e) => e !== replace).map(stripDirectives);
  if (key) {
    for (const el of patch) {
      if (!isObj(el)) continue;
      const idx = cur.findIndex((c) => isObj(c) && c[key] === el[key]);
      if (el.$patch === 'delete') {
        if (idx >= 0) cur.splice(idx, 1);
        continue;
      }
      if (idx >= 0) cur[idx] = smpElem(rt, cur[idx], el, path);
      else cur.push(stripDirectives(el));
    }
    return cur;
  }
  if ((rt.strategicSetLists ?? []).includes(path) && patch.every((e) => typeof e !== 'object')) {
    for (const el of patch) if (!cur.includes(el)) cur.push(el);
    return cur;
  }
  return patch.map(stripDirectives);
}

function smpElem(
  rt: ResourceType,
  target: unknown,
  patch: Record<string, unknown>,
  listPath: string,
): unknown {
  // element fields live under the list's own path (e.g. spec.containers.env)
  return smp(rt, target, patch, listPath);
}

/** Merge an applied configuration into a live object (server-side apply): maps recursively, keyed lists by key. */
export function applyMerge(rt: ResourceType, live: unknown, config: unknown, path = ''): unknown {
  if (!isObj(config)) return structuredClone(config);
  const out: Record<string, unknown> = isObj(live) ? { ...live } : {};
  for (const [k, v] of Object.entries(config)) {
    const sub = path ? `${path}.${k}` : k;
    if (Array.isArray(v)) {
      const key =
        rt.strategicMergeKeys?.[sub] ??
        (sub === 'metadata.ownerReferences' ? 'uid' : undefined) ??
        rt.applyListKeys?.[sub];
      if (key && v.every((e) => isObj(e))) {
        const cur = Array.isArray(out[k]) ? [...(out[k] as unknown[])] : [];
        for (const el of v as Record<string, unknown>[]) {
          const idx = cur.findIndex((c) => isObj(c) && c[key] === el[key]);
          if (idx >= 0) cur[idx] = applyMerge(rt, cur[idx], el, sub);
          else cur.push(structuredClone(el));
        }
        out[k] = cur;
      } else if (
        sub === 'metadata.finalizers' ||
        (rt.strategicSetLists ?? []).includes(sub) ||
        (rt.applySetLists ?? []).includes(sub)
      ) {
        const cur = Array.isArray(out[k]) ? [...(out[k] as unknown[])] : [];
        for (const el of v) if (!cur.includes(el)) cur.push(el);
        out[k] = cur;
      } else out[k] = structuredClone(v);
    } else if (isObj(v)) {
      out[k] = applyMerge(rt, out[k], v, sub);
    } else if (v === null) {
      delete out[k];
    } else out[k] = v;
  }
  return out;
}
