/**
 * Sizes and limits of the estimated cost of CRD validation rules (the estimate itself is `cel-cost.ts`): the sizes
 * kube-apiserver 1.32 derives from a schema (apiserver `SchemaDeclType`: `maxLength` x 4 bytes for strings, enum
 * lengths, date/duration formats, `maxItems`, `maxProperties`, else the 3 MiB request limit over the smallest
 * serialized element), cel-go's cost arithmetic (saturating uint64 ranges, cost factors rounded up), how many times a
 * rule runs (apiextensions `CELSchemaContext.MaxCardinality`), and the server's message.
 */
import { type CelSchemaNode, escapeCelName, withTypeAndObjectMeta } from './cel-names.js';

export const U64 = (1n << 64n) - 1n;
/** kube-apiserver's request size limit (apiserver `celconfig.MaxRequestSizeBytes`). */
const MAX_REQUEST = 3n * 1024n * 1024n;
/** The largest estimated cost of one rule (apiextensions `StaticEstimatedCostLimit`). */
export const CEL_RULE_COST_LIMIT = 10_000_000n;
/** The largest estimated cost of all rules of a CRD version (`StaticEstimatedCRDCostLimit`). */
export const CEL_CRD_COST_LIMIT = 100_000_000n;

export const add = (a: bigint, b: bigint) => (a + b > U64 ? U64 : a + b);
export const mul = (a: bigint, b: bigint) => (a * b > U64 ? U64 : a * b);
/** cel-go `multiplyByCostFactor`: the float product rounded up, saturating at the uint64 maximum. */
export function factor(x: bigint, f: number): bigint {
  const v = Math.ceil(Number(x) * f);
  return v >= 2 ** 64 ? U64 : BigInt(v);
}

export interface Range {
  readonly min: bigint;
  readonly max: bigint;
}
export const R = (min: bigint, max: bigint = min): Range => ({ min, max });
export const radd = (a: Range, b: Range) => R(add(a.min, b.min), add(a.max, b.max));
export const rmul = (a: Range, b: Range) => R(mul(a.min, b.min), mul(a.max, b.max));
export const rfactor = (a: Range, f: number) => R(factor(a.min, f), factor(a.max, f));
export const bmin = (a: bigint, b: bigint) => (a < b ? a : b);
export const bmax = (a: bigint, b: bigint) => (a > b ? a : b);
export const union = (a: Range, b: Range) => R(bmin(a.min, b.min), bmax(a.max, b.max));

/** A schema node as kube-apiserver declares it for cost estimation (apiserver `DeclType`: MaxElements, MinSerializedSize). */
export interface CelSizeType {
  readonly kind:
    | 'list'
    | 'map'
    | 'object'
    | 'string'
    | 'bytes'
    | 'int'
    | 'double'
    | 'bool'
    | 'timestamp'
    | 'duration'
    | 'dyn';
  readonly maxElements: bigint;
  readonly minSize: bigint;
  readonly elem?: CelSizeType;
  readonly fields?: Readonly<Record<string, CelSizeType>>;
}

const utf8Length = (v: string) => BigInt(new TextEncoder().encode(v).length);
export const STRING_KEY: CelSizeType = { kind: 'string', maxElements: 0n, minSize: 2n };
/** The type of a list of strings a function returns (`split`, `findAll`): sizes come from paths, not from it. */
export const STRING_LIST: CelSizeType = { kind: 'list', maxElements: 0n, minSize: 2n, elem: STRING_KEY };
const node = (v: unknown): CelSchemaNode | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as CelSchemaNode) : undefined;
export const num = (v: unknown): bigint | undefined =>
  typeof v === 'number' && Number.isFinite(v) ? (v < 0 ? 0n : BigInt(Math.trunc(v))) : undefined;

/** apiserver `SchemaDeclType` with its size estimates; `undefined` where CEL sees nothing. */
export function celSizeType(s: CelSchemaNode | undefined, resourceRoot = false): CelSizeType | undefined {
  if (!s) return undefined;
  if (s['x-kubernetes-int-or-string'] === true)
    return { kind: 'dyn', maxElements: MAX_REQUEST - 2n, minSize: 1n };
  const n = resourceRoot ? withTypeAndObjectMeta(s) : s;
  const embedded = (c: CelSchemaNode | undefined) => c?.['x-kubernetes-embedded-resource'] === true;
  switch (n.type) {
    case 'array': {
      const items = node(n.items);
      const elem = celSizeType(items, embedded(items));
      if (!elem) return undefined;
      const max = num(n.maxItems) ?? (MAX_REQUEST - 2n) / (elem.minSize + 1n);
      return { kind: 'list', maxElements: max, minSize: 2n, elem };
    }
    case 'object': {
      const addl = node(n.additionalProperties);
      if (addl) {
        const elem = celSizeType(addl, embedded(addl));
        if (!elem) return undefined;
        const max = num(n.maxProperties) ?? (MAX_REQUEST - 2n) / (elem.minSize + 6n);
        return { kind: 'map', maxElements: max, minSize: 2n, elem };
      }
      const required = new Set(Array.isArray(n.required) ? (n.required as string[]) : []);
      const fields: Record<string, CelSizeType> = {};
      let minSize = 2n;
      for (const [name, p] of Object.entries(node(n.properties) ?? {})) {
        const prop = node(p);
        const t = celSizeType(prop, embedded(prop));
        if (!t) continue;
        const escaped = escapeCelName(name);
        if (escaped !== undefined) fields[escaped] = t;
        if (required.has(name) && prop?.default === undefined)
          minSize += BigInt(name.length) + t.minSize + 4n;
      }
      return { kind: 'object', maxElements: 0n, minSize, fields };
    }
    case 'string': {
      const perRequest = MAX_REQUEST - 2n;
      switch (n.format) {
        case 'byte':
          return { kind: 'bytes', maxElements: num(n.maxLength) ?? perRequest, minSize: 2n };
        case 'duration':
          return { kind: 'duration', maxElements: 32n, minSize: 3n };
        case 'date':
          return { kind: 'timestamp', maxElements: 12n, minSize: 12n };
        case 'date-time':
          return { kind: 'timestamp', maxElements: 32n, minSize: 21n };
      }
      const maxLength = num(n.maxLength);
      const enumMax =
        Array.isArray(n.enum) && n.enum.length > 0
          ? n.enum.reduce<bigint>(
              (m, v) => (typeof v === 'string' && utf8Length(v) > m ? utf8Length(v) : m),
              0n,
            )
          : undefined;
      return {
        kind: 'string',
        maxElements: maxLength !== undefined ? maxLength * 4n : (enumMax ?? perRequest),
        minSize: 2n,
      };
    }
    case 'boolean':
      return { kind: 'bool', maxElements: 0n, minSize: 4n };
    case 'number':
      return { kind: 'double', maxElements: 0n, minSize: 1n };
    case 'integer':
      return { kind: 'int', maxElements: 0n, minSize: 1n };
    default:
      return undefined;
  }
}

/**
 * How many times a rule on a schema node can run (apiextensions `CELSchemaContext.MaxCardinality`): the product of
 * `maxItems`/`maxProperties` of the lists and maps above it (`ancestors`, root first), or, when one of them has no
 * bound, the 3 MiB request over the node's smallest serialized size plus one.
 */
export function ruleCardinality(ancestors: readonly CelSchemaNode[], nodeMinSize: bigint): bigint {
  let c = 1n;
  for (const s of ancestors) {
    if (s.type === 'array') {
      const m = num(s.maxItems);
      if (m === undefined) return MAX_REQUEST / (nodeMinSize + 1n);
      c = mul(c, m);
    } else if (
      s.type === 'object' &&
      s.additionalProperties !== undefined &&
      s.additionalProperties !== false
    ) {
      const m = num(s.maxProperties);
      if (m === undefined) return MAX_REQUEST / (nodeMinSize + 1n);
      c = mul(c, m);
    }
  }
  return c;
}

/**
 * Go's `%f` (6 decimals) or `%.1f` of a float64. `toFixed` rounds the exact binary value as Go does, except an
 * exact tie, which Go rounds to even and `toFixed` up; a double is an exact tie at `digits` decimals when it times
 * 2^(digits+1) is an odd integer.
 */
function goFixed(x: number, digits: number): string {
  const t = x * 2 ** (digits + 1);
  if (!Number.isInteger(t) || t % 2 === 0) return x.toFixed(digits);
  const down = Math.floor(x * 10 ** digits);
  return ((down % 2 === 0 ? down : down + 1) / 10 ** digits).toFixed(digits);
}

/** apiextensions `getCostErrorMessage`: `<what> exceeds budget by factor of <f> (try simplifying …)`. */
export function celCostMessage(what: string, cost: bigint, limit: bigint): string {
  const f = Number(cost) / Number(limit);
  const by = f > 100 ? 'more than 100x' : f < 1.5 ? `${goFixed(f, 6)}x` : `${goFixed(f, 1)}x`;
  return `${what} exceeds budget by factor of ${by} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
