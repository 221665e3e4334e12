/**
 * The built-in kinds' field schemas (generated table, `builtin-schemas.ts`) as the server uses them: finding
 * fields a kind does not declare (strict/warn field validation, as apimachinery's strict decoding reports them)
 * and describing kinds in OpenAPI v3 (`../openapi.ts`).
 */
import { BUILTIN_SCHEMAS, type SchemaModel } from './builtin-schemas.js';

/** The model describing `group/version/Kind`, if the kind is a built-in one. */
export function rootModel(group: string, version: string, kind: string): string | undefined {
  return BUILTIN_SCHEMAS.roots[`${group}/${version}/${kind}`];
}

export function model(name: string): SchemaModel | undefined {
  return BUILTIN_SCHEMAS.models[name];
}

/** What a client type string holds: a model, a list, a map, or a leaf. */
export type TypeShape =
  | { readonly kind: 'model'; readonly name: string }
  | { readonly kind: 'array'; readonly of: string }
  | { readonly kind: 'map'; readonly of: string }
  | { readonly kind: 'leaf'; readonly type: string };

export function shapeOf(type: string): TypeShape {
  const arr = /^Array<(.+)>$/.exec(type);
  if (arr) return { kind: 'array', of: arr[1]! };
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) return { kind: 'map', of: map[1]! };
  if (BUILTIN_SCHEMAS.models[type]) return { kind: 'model', name: type };
  return { kind: 'leaf', type };
}

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function walkValue(type: string, v: unknown, path: string, out: string[]): void {
  const s = shapeOf(type);
  if (s.kind === 'model') {
    if (isObj(v)) walkModel(s.name, v, path, out);
  } else if (s.kind === 'array') {
    if (Array.isArray(v))
      v.forEach((x, i) => {
        walkValue(s.of, x, `${path}[${i}]`, out);
      });
  } else if (s.kind === 'map' && isObj(v) && shapeOf(s.of).kind !== 'leaf') {
    for (const [k, x] of Object.entries(v)) walkValue(s.of, x, `${path}.${k}`, out);
  }
}

function walkModel(name: string, o: Record<string, unknown>, path: string, out: string[]): void {
  const m = BUILTIN_SCHEMAS.models[name];
  if (!m) return;
  for (const [k, v] of Object.entries(o)) {
    const f = m.f[k];
    const p = path ? `${path}.${k}` : k;
    if (!f) out.push(p);
    else walkValue(f[0], v, p, out);
  }
}

/**
 * Paths of the fields in `obj` that the model does not declare (`spec.containers[0].imagee`), in document
 * order, as apimachinery's strict decoding lists them.
 */
export function unknownFieldsOf(modelName: string, obj: Record<string, unknown>): string[] {
  const out: string[] = [];
  walkModel(modelName, obj, '', out);
  return out;
}
