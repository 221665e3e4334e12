/**
 * The call costs of the estimator (`cel-cost.ts`): cel-go's own for the standard functions and the Kubernetes
 * library's (`k8s.io/apiserver/pkg/cel/library` `CostEstimator`) for its functions, each of a call's target and
 * arguments already estimated. A function not listed is not estimated.
 */

import type { CelAstNode } from './cel-names.js';
import { type CelSizeType, R, type Range, radd, rfactor, rmul, STRING_LIST, U64 } from './cel-size.js';

export type Kind = CelSizeType['kind'] | 'null' | 'opaque';
/** A node's estimate: its cost range, its type, the field path cel-go tracks for it, and a size it computed. */
export interface Est {
  readonly cost: Range;
  readonly kind: Kind;
  readonly type?: CelSizeType;
  readonly path?: readonly string[];
  readonly size?: Range;
}

export class Unknown extends Error {}
export const unknown = (what: string): never => {
  throw new Unknown(what);
};

export const SCALAR = new Set<Kind>(['bool', 'double', 'duration', 'int', 'timestamp']);
export const STRING_FACTOR = 0.1;
export const REGEX_FACTOR = 0.25;

/**
 * The cost of calling `fn` (a method when `t` is its target's estimate) with `args` (`argNodes` their parse trees),
 * the target's and arguments' own costs included; `size` is the estimator's size of an estimated node.
 */
export function callCost(
  fn: string,
  t: Est | undefined,
  args: readonly Est[],
  argNodes: readonly CelAstNode[],
  size: (e: Est) => Range,
): Est {
  const target = t;
  const argCost = args.reduce((c, e) => radd(c, e.cost), R(0n));
  const withTarget = (c: Range) => (t ? radd(t.cost, c) : c);
  const out = (c: Range, kind: Kind, sz?: Range): Est => ({
    cost: withTarget(radd(c, argCost)),
    kind,
    ...(kind === 'list' ? { type: STRING_LIST } : {}),
    ...(sz ? { size: sz } : {}),
  });
  const a0 = args[0];
  switch (fn) {
    case 'size':
      if ((t ?? a0)?.kind === 'dyn') return unknown('size of dyn');
      return out(R(1n), 'int');
    case 'int':
    case 'uint':
    case 'double':
    case 'bool':
    case 'dyn':
      if (args.length !== 1 || target) return unknown(fn);
      return out(R(1n), fn === 'dyn' ? 'dyn' : fn === 'uint' ? 'int' : (fn as Kind));
    case 'startsWith':
    case 'endsWith':
      if (t?.kind !== 'string' || !a0) return unknown(fn);
      return out(rfactor(size(a0), STRING_FACTOR), 'bool');
    case 'contains':
      if (t?.kind !== 'string' || !a0) return unknown(fn);
      return out(rmul(rfactor(size(t), STRING_FACTOR), rfactor(size(a0), STRING_FACTOR)), 'bool');
    case 'matches':
      if (t?.kind !== 'string' || !a0) return unknown(fn);
      return out(rmul(rfactor(radd(size(t), R(1n)), STRING_FACTOR), rfactor(size(a0), REGEX_FACTOR)), 'bool');
    case 'lowerAscii':
    case 'upperAscii':
    case 'trim':
      if (t?.kind !== 'string') return unknown(fn);
      return out(rfactor(size(t), STRING_FACTOR), 'string', size(t));
    case 'split': {
      if (t?.kind !== 'string') return unknown(fn);
      const sz = size(t);
      const limit =
        argNodes[1]?.op === 'value' && typeof argNodes[1].args === 'bigint'
          ? (argNodes[1].args as bigint)
          : undefined;
      return out(rfactor(sz, 2 * STRING_FACTOR), 'list', R(0n, limit ?? sz.max));
    }
    case 'join': {
      if (t?.kind !== 'list') return unknown(fn);
      const list = size(t);
      const elem: Est = {
        cost: R(0n),
        kind: t.type?.elem?.kind ?? 'string',
        ...(t.path ? { path: [...t.path, '@items'] } : {}),
      };
      let sz = rmul(list, size(elem));
      if (a0)
        sz = radd(
          sz,
          rmul(size(a0), R(list.min > 0n ? list.min - 1n : 0n, list.max > 0n ? list.max - 1n : 0n)),
        );
      return out(rfactor(sz, STRING_FACTOR), 'string', sz);
    }
    case 'find':
    case 'findAll': {
      if (t?.kind !== 'string' || !a0) return unknown(fn);
      const sz = size(t);
      const c = rmul(rfactor(radd(sz, R(1n)), STRING_FACTOR), rfactor(size(a0), REGEX_FACTOR));
      return out(c, fn === 'find' ? 'string' : 'list', R(0n, sz.max));
    }
    case 'quantity':
    case 'isQuantity':
    case 'url':
    case 'ip':
    case 'cidr':
    case 'isIP':
    case 'isCIDR':
      if (target || !a0 || a0.kind !== 'string') return unknown(fn);
      return out(
        rfactor(size(a0), STRING_FACTOR),
        fn.startsWith('is') ? 'bool' : 'opaque',
        fn === 'url' ? size(a0) : undefined,
      );
    case 'isURL':
      // not among the library's estimates: cel-go's O(1) default
      if (target || !a0 || a0.kind !== 'string') return unknown(fn);
      return out(R(1n), 'bool');
    case 'sign':
    case 'asInteger':
    case 'compareTo':
    case 'family':
    case 'prefixLength':
      if (t?.kind !== 'opaque') return unknown(fn);
      return out(R(1n), 'int');
    case 'asApproximateFloat':
      if (t?.kind !== 'opaque') return unknown(fn);
      return out(R(1n), 'double');
    case 'isInteger':
    case 'isGreaterThan':
    case 'isLessThan':
    case 'isLoopback':
    case 'isUnspecified':
    case 'isGlobalUnicast':
      if (t?.kind !== 'opaque') return unknown(fn);
      return out(R(1n), 'bool');
    case 'getScheme':
    case 'getHostname':
    case 'getHost':
    case 'getPort':
    case 'getEscapedPath':
      if (t?.kind !== 'opaque') return unknown(fn);
      return out(R(1n), 'string');
    case 'substring':
      if (t?.kind !== 'string') return unknown(fn);
      return out(rfactor(size(t), STRING_FACTOR), 'string', size(t));
    case 'charAt':
      // not among the library's estimates: cel-go's O(1) default
      if (t?.kind !== 'string' || !a0) return unknown(fn);
      return out(R(1n), 'string');
    case 'replace': {
      const a1 = args[1];
      if (t?.kind !== 'string' || !a0 || !a1) return unknown(fn);
      return out(rfactor(size(t), 2 * STRING_FACTOR), 'string', replacedSize(size(t), size(a0), size(a1)));
    }
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
    case 'indexOf':
    case 'lastIndexOf': {
      if (t?.kind === 'string' && (fn === 'indexOf' || fn === 'lastIndexOf'))
        return out(rfactor(size(t), STRING_FACTOR), 'int');
      const elemKind = t?.kind === 'list' ? t.type?.elem?.kind : undefined;
      if (!t || !elemKind) return unknown(fn);
      // each element is visited once, a string one traversed
      let elCost = R(1n);
      if (elemKind === 'string' || elemKind === 'bytes') {
        const elem: Est = { cost: R(0n), kind: elemKind, ...(t.path ? { path: [...t.path, '@items'] } : {}) };
        elCost = radd(elCost, rfactor(size(elem), STRING_FACTOR));
      }
      const kind: Kind = fn === 'isSorted' ? 'bool' : fn.endsWith('ndexOf') ? 'int' : elemKind;
      return out(rmul(size(t), elCost), kind);
    }
    case 'containsIP':
    case 'containsCIDR': {
      // an address is 4 to 16 bytes: comparing two (and, for a CIDR, its mask) plus parsing a string argument
      if (t?.kind !== 'opaque' || !a0 || (a0.kind !== 'string' && a0.kind !== 'opaque')) return unknown(fn);
      const c = fn === 'containsIP' ? R(1n, 4n) : R(3n, 7n);
      return out(a0.kind === 'string' ? radd(c, rfactor(size(a0), STRING_FACTOR)) : c, 'bool');
    }
    case 'masked':
      if (t?.kind !== 'opaque') return unknown(fn);
      return out(R(1n), 'opaque');
    case 'isLinkLocalMulticast':
    case 'isLinkLocalUnicast':
      if (t?.kind !== 'opaque') return unknown(fn);
      return out(R(1n), 'bool');
    case 'hasValue':
      if (t?.kind !== 'opaque') return unknown(fn);
      return out(R(1n), 'bool');
    case 'orValue':
      if (t?.kind !== 'opaque' || !a0) return unknown(fn);
      return out(R(1n), a0.kind);
    default:
      return unknown(`function ${fn}`);
  }
}

/** The library's result size of `s.replace(from, to)`: how many replacements at most and at least, and what stays. */
function replacedSize(sz: Range, from: Range, to: Range): Range {
  const ceilDiv = (a: bigint, b: bigint) => BigInt(Math.ceil(Number(a) / Number(b)));
  let countMax = 0n;
  let keptMax = 0n;
  if (from.min === 0n) {
    countMax = sz.max < U64 ? sz.max + 1n : sz.max;
    keptMax = sz.max;
  } else if (to.max <= from.min) keptMax = sz.max;
  else countMax = ceilDiv(sz.max, from.min);
  let countMin = 0n;
  let keptMin = 0n;
  if (from.max === 0n) {
    countMin = sz.min < U64 ? sz.min + 1n : sz.min;
    keptMin = sz.min;
  } else if (from.max <= to.min) keptMin = sz.min;
  else countMin = ceilDiv(sz.min, from.max);
  return radd(rmul(R(countMin, countMax), to), R(keptMin, keptMax));
}
