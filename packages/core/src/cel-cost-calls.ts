/**
 * The call costs of the estimator (`cel-cost.ts`): cel-go's own for the standard functions and the Kubernetes
 * library's (`k8s.io/apiserver/pkg/cel/library` `CostEstimator`) for its functions, each of a call's target and
 * arguments already estimated. A function not listed is not estimated.
 */

import type { CelAstNode } from './cel-names.js';
import { type CelSizeType, R, type Range, radd, rfactor, rmul, STRING_LIST } from './cel-size.js';

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
    default:
      return unknown(`function ${fn}`);
  }
}
