/**
 * The "did mutate change anything?" test of createOrUpdate / createOrPatch, and the JSON merge patch
 * (RFC 7386) between two versions of an object.
 */

type Json = Record<string, unknown>;

/** A JSON object to walk key by key. A Date (client-node's timestamp type) or bytes are values, not objects. */
function isPlainObject(v: unknown): v is Json {
  return (
    typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date) && !ArrayBuffer.isView(v)
  );
}

/** `undefined`, `null`, an absent property and an empty array all mean "not set" (Go: nil slice = empty slice). */
function isUnset(v: unknown): boolean {
  return v === undefined || v === null || (Array.isArray(v) && v.length === 0);
}

/**
 * Whether `mutated` asks for nothing that `base` does not already have — apimachinery's
 * `equality.Semantic.DeepEqual`, adapted to JSON objects built in TypeScript:
 * - key order does not matter;
 * - `null`, an absent property and an empty array are the same (as a nil and an empty slice are in Go);
 * - a property that `mutated` holds with the value `undefined` is "not set by the caller" and ignored, so
 *   a field the server defaulted is not reset by `{ …, imagePullPolicy: undefined }`. Use `delete` (or
 *   `null`) to clear a field on purpose.
 * Everything else (numbers, strings, booleans, array order) compares exactly.
 */
export function isUnchanged(base: unknown, mutated: unknown): boolean {
  if (mutated === undefined) return true;
  if (isUnset(base) && isUnset(mutated)) return true;
  if (Array.isArray(base) && Array.isArray(mutated)) {
    if (base.length !== mutated.length) return false;
    return base.every((b, i) => isUnchanged(b, mutated[i]));
  }
  if (isPlainObject(base) && isPlainObject(mutated)) {
    for (const k of Object.keys(mutated)) if (!isUnchanged(base[k], mutated[k])) return false;
    // a key the caller removed (absent, not `undefined`) that base had set
    for (const k of Object.keys(base)) if (!(k in mutated) && !isUnset(base[k])) return false;
    return true;
  }
  if (base instanceof Date && mutated instanceof Date) return base.getTime() === mutated.getTime();
  return base === mutated;
}

/**
 * The JSON merge patch (RFC 7386) that turns `base` into `mutated`: changed and new properties with their
 * new values (objects recursively, arrays whole), removed properties as `null`. Properties `mutated` holds
 * as `undefined` are left alone, as {@link isUnchanged} ignores them. Returns `{}` when nothing changed.
 */
export function createMergePatch(base: unknown, mutated: unknown): Json {
  const out: Json = {};
  const b = isPlainObject(base) ? base : {};
  const m = isPlainObject(mutated) ? mutated : {};
  for (const [k, v] of Object.entries(m)) {
    if (v === undefined) continue;
    const old = b[k];
    if (isUnchanged(old, v)) continue;
    if (isPlainObject(v) && isPlainObject(old)) {
      const sub = createMergePatch(old, v);
      if (Object.keys(sub).length) out[k] = sub;
    } else {
      out[k] = stripUndefined(v);
    }
  }
  for (const k of Object.keys(b)) if (!(k in m) && !isUnset(b[k])) out[k] = null;
  return out;
}

function stripUndefined(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripUndefined);
  if (!isPlainObject(v)) return v;
  const out: Json = {};
  for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = stripUndefined(x);
  return out;
}

/**
 * `mutated` with every property it holds as `undefined` given the value `base` has there (objects recursively,
 * arrays of the same length element by element), for a whole-object write (createOrUpdate's PUT): the same
 * "`undefined` = not set by the caller, keep the value as read" rule that {@link isUnchanged} and
 * {@link createMergePatch} follow. Without it, `JSON.stringify` would drop the property and the PUT would
 * clear it, though an otherwise identical mutate is `unchanged` and createOrPatch keeps it. `mutated` is not
 * changed; a property that is absent (deleted) stays absent.
 */
export function withReadValues<T>(base: unknown, mutated: T): T {
  if (mutated === undefined) return base as T;
  if (Array.isArray(base) && Array.isArray(mutated)) {
    if (base.length !== mutated.length) return mutated;
    return mutated.map((v, i) => withReadValues(base[i], v)) as T;
  }
  if (isPlainObject(base) && isPlainObject(mutated)) {
    const out: Json = {};
    for (const [k, v] of Object.entries(mutated)) {
      const filled = withReadValues(base[k], v);
      if (filled !== undefined) out[k] = filled;
    }
    return out as T;
  }
  return mutated;
}
