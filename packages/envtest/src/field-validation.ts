/**
 * fieldValidation (Strict / Warn / Ignore, protocol §11): find fields the kind does not declare (built-ins:
 * by the schemas generated from the Kubernetes OpenAPI definitions; custom resources: by their CRD's
 * openAPIV3Schema), then refuse
 * them (Strict, 400), warn about them (Warn, `Warning: 299`), or drop them silently (Ignore).
 */
import { badRequest } from './errors.js';
import type { KObject, ResourceType } from './resource-type.js';
import { rootModel, unknownFieldsOf } from './schema/schemas.js';

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function fieldValidationMode(q: URLSearchParams): 'Strict' | 'Warn' | 'Ignore' {
  const v = q.get('fieldValidation');
  if (v === null || v === '') return 'Warn';
  if (v === 'Strict' || v === 'Warn' || v === 'Ignore') return v;
  throw badRequest(`fieldValidation parameter unsupported: ${JSON.stringify(v)}`);
}

export function applyFieldValidation(
  rt: ResourceType,
  o: KObject,
  q: URLSearchParams,
  warnings: string[],
): void {
  const mode = fieldValidationMode(q);
  const unknown = rt.unknownFields ? rt.unknownFields(o) : builtinUnknownFields(rt, o);
  if (unknown.length === 0) return;
  // decoding drops unknown fields unless Strict refuses them
  if (mode !== 'Strict') for (const u of unknown) deletePath(o, u.replace(/^\./, ''));
  if (mode === 'Ignore') return;
  if (mode === 'Strict') {
    const list = unknown.map((u) => `unknown field "${u.replace(/^\./, '')}"`);
    throw badRequest(
      `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: strict decoding error: ${list.join(', ')}`,
    );
  }
  for (const u of unknown)
    warnings.push(
      rt.crdName !== undefined
        ? `unknown field "${u.replace(/^\./, '')}"`
        : `unknown field "${u.replace(/^\./, '')}"`,
    );
}

/** Unknown fields of a built-in kind, by its OpenAPI-derived schema (metadata only for a kind without one). */
function builtinUnknownFields(rt: ResourceType, o: KObject): string[] {
  const root = rootModel(rt.group, rt.version, rt.kind);
  if (root) return unknownFieldsOf(root, o);
  return isObj(o.metadata) ? unknownFieldsOf('V1ObjectMeta', o.metadata).map((p) => `metadata.${p}`) : [];
}

function deletePath(o: Record<string, unknown>, dotted: string): void {
  // segments like `containers[0]` index into lists
  const parts = dotted.split('.');
  let cur: unknown = o;
  for (let i = 0; i < parts.length - 1; i++) {
    const m = /^(.*)\[(\d+)\]$/.exec(parts[i]!);
    if (!isObj(cur)) return;
    cur = m ? (cur[m[1]!] as unknown[] | undefined)?.[Number(m[2])] : cur[parts[i]!];
  }
  if (isObj(cur)) delete cur[parts[parts.length - 1]!];
}
