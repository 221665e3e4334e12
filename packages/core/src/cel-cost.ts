/**
 * The estimated cost of a CRD validation rule, as kube-apiserver 1.32 estimates it when a CRD is created
 * (apiextensions-apiserver `schema/cel` compilation with cel-go's checker cost estimator and the Kubernetes
 * library's call costs; apiextensions `validation`: the rule's worst-case cost times how many times it can run,
 * `ruleCardinality` in `cel-size.ts`). Only the constructs this module knows are estimated; for any other the
 * estimate is `undefined`, and callers accept the rule (they must never refuse what the server accepts).
 */
import { callCost, type Est, type Kind, SCALAR, STRING_FACTOR, Unknown, unknown } from './cel-cost-calls.js';
import type { CelAstNode } from './cel-names.js';
import {
  add,
  bmin,
  type CelSizeType,
  R,
  type Range,
  radd,
  rfactor,
  rmul,
  STRING_KEY,
  U64,
  union,
} from './cel-size.js';

/** An expression's parts as the estimator reads them from cel-js's parse tree. */
const argsOf = (n: CelAstNode): unknown[] => (Array.isArray(n.args) ? n.args : []);
const child = (v: unknown): CelAstNode => v as CelAstNode;

class Estimator {
  private readonly scopes = new Map<string, Est[]>();
  constructor(private readonly root: CelSizeType) {}

  private resolve(path: readonly string[]): Range | undefined {
    // the first name is the variable (self, oldSelf, or a macro's over a computed range): the root
    let cur: CelSizeType | undefined = this.root;
    for (const name of path.slice(1)) {
      if (name === '@items' || name === '@values') cur = cur?.elem;
      else if (name === '@keys') cur = cur?.kind === 'map' ? STRING_KEY : undefined;
      else cur = cur?.fields?.[name];
    }
    return cur ? R(0n, cur.maxElements) : undefined;
  }

  /** cel-go `sizeEstimate`: a computed size, else the schema's by the node's path, else by its type. */
  size(e: Est): Range {
    return e.size ?? (e.path ? this.resolve(e.path) : undefined) ?? (SCALAR.has(e.kind) ? R(1n) : R(0n, U64));
  }

  est(n: CelAstNode): Est {
    const a = argsOf(n);
    switch (n.op) {
      case 'value':
        return this.literal(n.args);
      case 'id':
        return this.ident(String(n.args));
      case '.':
      case '.?': {
        const o = this.est(child(a[0]));
        const field = String(a[1]);
        const t =
          o.kind === 'map'
            ? o.type?.elem
            : o.kind === 'object'
              ? (o.type?.fields?.[field] ?? unknown('field'))
              : undefined;
        const kind: Kind = t?.kind ?? (o.kind === 'dyn' ? 'dyn' : unknown('selection'));
        const path = [...(o.path ?? []), field];
        if (n.op === '.?') return { cost: radd(o.cost, R(1n)), kind: 'opaque', path };
        const selectCost = o.kind === 'map' || o.kind === 'object' ? R(1n) : R(0n);
        return { cost: radd(o.cost, selectCost), kind, ...(t ? { type: t } : {}), path };
      }
      case '[]': {
        const o = this.est(child(a[0]));
        const i = this.est(child(a[1]));
        if (o.kind !== 'list' && o.kind !== 'map') unknown('index');
        const t = o.type?.elem;
        return {
          cost: radd(radd(o.cost, i.cost), R(1n)),
          kind: t?.kind ?? 'dyn',
          ...(t ? { type: t } : {}),
          path: [...(o.path ?? []), o.kind === 'list' ? '@items' : '@values'],
        };
      }
      case 'list': {
        const els = (Array.isArray(n.args) ? n.args : []).map((x) => this.est(child(x)));
        const cost = els.reduce((c, e) => radd(c, e.cost), R(10n));
        const first = els[0];
        const elem =
          first?.type ??
          (first ? { kind: first.kind as CelSizeType['kind'], maxElements: 0n, minSize: 0n } : undefined);
        return {
          cost,
          kind: 'list',
          ...(elem ? { type: { kind: 'list', maxElements: 0n, minSize: 0n, elem } } : {}),
          size: R(BigInt(els.length)),
        };
      }
      case 'map': {
        const entries = (Array.isArray(n.args) ? n.args : []) as unknown[][];
        let cost = R(30n);
        for (const e of entries) for (const x of e) cost = radd(cost, this.est(child(x)).cost);
        return { cost, kind: 'map', size: R(BigInt(entries.length)) };
      }
      case '!_':
      case '-_': {
        const x = this.est(child(n.args));
        return { cost: radd(x.cost, R(1n)), kind: n.op === '!_' ? 'bool' : x.kind };
      }
      case '&&':
      case '||': {
        const l = this.est(child(a[0]));
        const r = this.est(child(a[1]));
        return { cost: R(l.cost.min, add(l.cost.max, r.cost.max)), kind: 'bool' };
      }
      case '?:': {
        const c = this.est(child(a[0]));
        const t = this.est(child(a[1]));
        const f = this.est(child(a[2]));
        return {
          cost: radd(c.cost, union(t.cost, f.cost)),
          kind: t.kind,
          ...(t.type ? { type: t.type } : {}),
          size: union(this.size(t), this.size(f)),
        };
      }
      case '==':
      case '!=':
        return this.equality(this.est(child(a[0])), this.est(child(a[1])), 'bool');
      case '<':
      case '<=':
      case '>':
      case '>=': {
        const l = this.est(child(a[0]));
        const r = this.est(child(a[1]));
        if ((l.kind === 'string' || l.kind === 'bytes') && l.kind === r.kind)
          return this.equality(l, r, 'bool');
        if (!SCALAR.has(l.kind) || !SCALAR.has(r.kind)) unknown('comparison');
        return { cost: radd(radd(l.cost, r.cost), R(1n)), kind: 'bool' };
      }
      case '+': {
        const l = this.est(child(a[0]));
        const r = this.est(child(a[1]));
        const args = radd(l.cost, r.cost);
        if ((l.kind === 'string' || l.kind === 'bytes') && l.kind === r.kind) {
          const size = radd(this.size(l), this.size(r));
          return { cost: radd(rfactor(size, STRING_FACTOR), args), kind: l.kind, size };
        }
        if (l.kind === 'list' && r.kind === 'list')
          return {
            cost: radd(R(1n), args),
            kind: 'list',
            ...(l.type ? { type: l.type } : {}),
            size: radd(this.size(l), this.size(r)),
          };
        if (!SCALAR.has(l.kind) || l.kind !== r.kind) unknown('+');
        return { cost: radd(args, R(1n)), kind: l.kind };
      }
      case '-':
      case '*':
      case '/':
      case '%': {
        const l = this.est(child(a[0]));
        const r = this.est(child(a[1]));
        if (!SCALAR.has(l.kind) || l.kind !== r.kind) unknown('arithmetic');
        return { cost: radd(radd(l.cost, r.cost), R(1n)), kind: l.kind };
      }
      case 'in': {
        const l = this.est(child(a[0]));
        const r = this.est(child(a[1]));
        const args = radd(l.cost, r.cost);
        if (r.kind === 'list') return { cost: radd(this.size(r), args), kind: 'bool' };
        if (r.kind === 'map') return { cost: radd(args, R(1n)), kind: 'bool' };
        return unknown('in');
      }
      case 'call':
        return this.call(String(a[0]), undefined, (a[1] as unknown[]).map(child));
      case 'rcall':
        return this.call(String(a[0]), child(a[1]), (a[2] as unknown[]).map(child));
      default:
        return unknown(n.op);
    }
  }

  private literal(v: unknown): Est {
    if (typeof v === 'string') return { cost: R(0n), kind: 'string', size: R(BigInt([...v].length)) };
    if (typeof v === 'bigint') return { cost: R(0n), kind: 'int', size: R(1n) };
    if (typeof v === 'number') return { cost: R(0n), kind: 'double', size: R(1n) };
    if (typeof v === 'boolean') return { cost: R(0n), kind: 'bool', size: R(1n) };
    if (v === null) return { cost: R(0n), kind: 'null', size: R(1n) };
    if (v instanceof Uint8Array) return { cost: R(0n), kind: 'bytes', size: R(BigInt(v.length)) };
    return unknown('literal');
  }

  private ident(name: string): Est {
    const scoped = this.scopes.get(name);
    const top = scoped?.[scoped.length - 1];
    if (top) return { ...top, cost: R(1n) };
    if (name === 'self' || name === 'oldSelf')
      return { cost: R(1n), kind: this.root.kind, type: this.root, path: [name] };
    return unknown(`identifier ${name}`);
  }

  private equality(l: Est, r: Est, kind: Kind): Est {
    const ls = this.size(l);
    const rs = this.size(r);
    const smallestMax = bmin(rs.max, ls.max);
    const cost = rfactor(R(smallestMax > 0n ? 1n : 0n, smallestMax), STRING_FACTOR);
    if (l.kind === 'opaque' || r.kind === 'opaque') unknown('equality of a library type');
    return { cost: radd(cost, radd(l.cost, r.cost)), kind };
  }

  private comprehension(
    range: Est,
    iterVar: string,
    body: () => { loop: Range; step: Range; result: Range; init: Range; kind: Kind; type?: CelSizeType },
  ): Est {
    if (range.kind !== 'list' && range.kind !== 'map') unknown('comprehension range');
    const varType = range.kind === 'list' ? range.type?.elem : STRING_KEY;
    const v: Est = {
      cost: R(1n),
      kind: varType?.kind ?? 'dyn',
      ...(varType ? { type: varType } : {}),
      path: [...(range.path ?? []), range.kind === 'list' ? '@items' : '@keys'],
    };
    const stack = this.scopes.get(iterVar) ?? [];
    stack.push(v);
    this.scopes.set(iterVar, stack);
    let parts: ReturnType<typeof body>;
    try {
      parts = body();
    } finally {
      stack.pop();
    }
    const count = this.size(range);
    const cost = radd(
      radd(radd(range.cost, parts.init), parts.result),
      rmul(count, radd(parts.step, parts.loop)),
    );
    return { cost, kind: parts.kind, ...(parts.type ? { type: parts.type } : {}), size: count };
  }

  private call(fn: string, target: CelAstNode | undefined, argNodes: CelAstNode[]): Est {
    if (fn === 'has' && !target) {
      const sel = argNodes[0];
      if (sel?.op !== '.') return unknown('has');
      // presence tests cost nothing in kube-apiserver's environment (PresenceTestHasCost(false))
      return { cost: this.est(child(argsOf(sel)[0])).cost, kind: 'bool' };
    }
    if (target && ['all', 'exists', 'exists_one', 'map', 'filter'].includes(fn))
      return this.macro(fn, target, argNodes);
    if (target?.op === 'id' && target.args === 'sets') return this.sets(fn, argNodes);
    if (target?.op === 'id' && target.args === 'optional' && (fn === 'of' || fn === 'none')) {
      const args = argNodes.map((x) => this.est(x));
      return { cost: args.reduce((c, e) => radd(c, e.cost), R(1n)), kind: 'opaque' };
    }
    const t = target ? this.est(target) : undefined;
    // a CIDR's ip() is O(1) in the library (overload cidr_ip)
    if (fn === 'ip' && t?.kind === 'opaque' && argNodes.length === 0)
      return { cost: radd(t.cost, R(1n)), kind: 'opaque' };
    return callCost(
      fn,
      t,
      argNodes.map((x) => this.est(x)),
      argNodes,
      (e) => this.size(e),
    );
  }

  /** cel-go's sets extension: |a| x |b| (twice for equivalent) plus the call (ext `estimateSetsCost`). */
  private sets(fn: string, argNodes: CelAstNode[]): Est {
    const f = fn === 'equivalent' ? 2 : fn === 'contains' || fn === 'intersects' ? 1 : unknown(`sets.${fn}`);
    const [a, b] = argNodes.map((x) => this.est(x));
    if (!a || !b || argNodes.length !== 2) return unknown('sets arguments');
    const cost = radd(radd(rfactor(rmul(this.size(a), this.size(b)), f), R(1n)), radd(a.cost, b.cost));
    return { cost, kind: 'bool' };
  }

  private macro(fn: string, target: CelAstNode, argNodes: CelAstNode[]): Est {
    const range = this.est(target);
    const v = argNodes[0];
    if (v?.op !== 'id') return unknown('macro variable');
    const name = String(v.args);
    const p = argNodes[1] ? child(argNodes[1]) : unknown('macro');
    const ONE = R(1n);
    return this.comprehension(range, name, () => {
      switch (fn) {
        case 'all':
        case 'exists': {
          const pc = this.est(p).cost;
          // __result__ && p (or ||): the accumulator, then p; @not_strictly_false(__result__) (exists: of !__result__)
          const step = R(1n, add(1n, pc.max));
          return { init: R(0n), loop: fn === 'all' ? R(2n) : R(3n), step, result: ONE, kind: 'bool' };
        }
        case 'exists_one': {
          const pc = this.est(p).cost;
          return { init: R(0n), loop: R(0n), step: radd(pc, R(1n, 2n)), result: R(2n), kind: 'bool' };
        }
        case 'map': {
          const f = argNodes[2] ? this.est(child(argNodes[2])) : undefined;
          const tc = f ? f.cost : this.est(p).cost;
          const push = radd(R(12n), tc);
          const step = f ? radd(this.est(p).cost, union(push, ONE)) : push;
          const out = f ?? this.est(p);
          const elem = out.type ?? { kind: out.kind as CelSizeType['kind'], maxElements: 0n, minSize: 0n };
          return {
            init: R(10n),
            loop: R(0n),
            step,
            result: ONE,
            kind: 'list',
            type: { kind: 'list', maxElements: 0n, minSize: 0n, elem },
          };
        }
        case 'filter': {
          const pc = this.est(p).cost;
          const step = radd(pc, union(R(13n), ONE));
          return {
            init: R(10n),
            loop: R(0n),
            step,
            result: ONE,
            kind: 'list',
            ...(range.type ? { type: range.type } : {}),
          };
        }
        default:
          return unknown(fn);
      }
    });
  }
}

/**
 * cel-go's estimated cost range of a rule (its parse tree from cel-js) whose `self`/`oldSelf` has the type `root`
 * (see {@link celSizeType}), in kube-apiserver 1.32's environment; `undefined` when the rule uses a construct this
 * estimator does not know.
 */
export function estimateCelCost(
  ast: CelAstNode,
  root: CelSizeType,
): { min: bigint; max: bigint } | undefined {
  try {
    return new Estimator(root).est(ast).cost;
  } catch (e) {
    if (e instanceof Unknown) return undefined;
    throw e;
  }
}
