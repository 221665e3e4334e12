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

/**
 * RFC 6902 JSON patch. A failing `test` or a bad path → 422 (as the API server answers), a malformed
 * document → 400.
 */
export function jsonPatch(target: KObject, ops: unknown, kind: string, name: string): KObject {
  if (!Array.isArray(ops))
    throw badRequest('json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp');
  const doc = structuredClone(target);
  try {
    const res = fastJsonPatch.applyPatch(doc, ops as fastJsonPatch.Operation[], true, true, false);
    return res.newDocument as KObject;
  } catch (e) {
    const msg = e instanceof Error ? e.message.split('\n')[0] : String(e);
    const name_ = (e as { name?: string }).name;
    if (name_ === 'TEST_OPERATION_FAILED')
      throw new ApiStatusError(
        failureStatus(422, 'Invalid', `the server rejected our request due to an error in our request`, {
          name,
          kind,
          causes: [{ reason: 'FieldValueInvalid', message: 'testing value failed', field: 'patch' }],
        }),
      );
    throw new ApiStatusError(
      failureStatus(
        422,
        'Invalid',
        `the server rejected our request due to an error in our request: ${msg}`,
        {
          name,
          kind,
        },
      ),
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
      const key = rt.strategicMergeKeys?.[sub] ?? (sub === 'metadata.ownerReferences' ? 'uid' : undefined);
      if (key && v.every((e) => isObj(e))) {
        const cur = Array.isArray(out[k]) ? [...(out[k] as unknown[])] : [];
        for (const el of v as Record<string, unknown>[]) {
          const idx = cur.findIndex((c) => isObj(c) && c[key] === el[key]);
          if (idx >= 0) cur[idx] = applyMerge(rt, cur[idx], el, sub);
          else cur.push(structuredClone(el));
        }
        out[k] = cur;
      } else if (sub === 'metadata.finalizers' || (rt.strategicSetLists ?? []).includes(sub)) {
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
