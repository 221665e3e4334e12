/**
 * @packageDocumentation
 * `@kubeloop/core/cel` — how kube-apiserver 1.32 sees a CRD's structural schema from CEL, shared by the CRD
 * compile checks (`@kubeloop/crd`) and the in-process API server (`@kubeloop/envtest`), which may not import each
 * other: the CEL name of a property ({@link escapeCelName}, apiserver `pkg/cel` `Escape`), the words CEL
 * reserves ({@link CEL_RESERVED_WORDS}), and the CEL type of a schema node ({@link schemaCelType}, apiserver
 * `pkg/cel/common` `SchemaDeclType`) as a plain tree each evaluator declares in its own way. No dependencies, no
 * CEL evaluator.
 */

export {
  CEL_RESERVED_WORDS,
  type CelAstNode,
  type CelCheckedType,
  type CelSchemaNode,
  escapeCelName,
} from './cel-names.js';

import {
  CEL_RESERVED_WORDS,
  type CelAstNode,
  type CelSchemaNode,
  escapeCelName,
  withTypeAndObjectMeta,
} from './cel-names.js';

/** A CEL scalar type of a schema node (`timestamp` for `date`/`date-time` strings, `bytes` for `byte`). */
export type CelScalarType = 'bool' | 'int' | 'double' | 'string' | 'bytes' | 'timestamp' | 'duration' | 'dyn';

/**
 * The CEL type of a schema node: a scalar, a list, a string-keyed map (`additionalProperties`), or an object
 * whose fields are keyed by their escaped names ({@link escapeCelName}).
 */
export type CelType =
  | CelScalarType
  | { readonly list: CelType }
  | { readonly map: CelType }
  | { readonly object: Readonly<Record<string, CelType>> };

function child(v: unknown): CelSchemaNode | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as CelSchemaNode) : undefined;
}

const STRING_FORMATS: Readonly<Record<string, CelScalarType>> = {
  byte: 'bytes',
  duration: 'duration',
  date: 'timestamp',
  'date-time': 'timestamp',
};

/**
 * The CEL type kube-apiserver 1.32 declares for a schema node (apiserver `SchemaDeclType`), or `undefined` when
 * the node is not visible to CEL. `x-kubernetes-int-or-string` is `dyn`; an object with `additionalProperties` is
 * a map; any other object has one field per property whose type is visible and whose name can be escaped (a
 * `x-kubernetes-preserve-unknown-fields` object's unknown fields are not among them); a list or map whose items
 * are not visible is not visible either, nor is a node with no type. `resourceRoot` (the custom resource's root,
 * and each `x-kubernetes-embedded-resource`) adds `apiVersion`, `kind` and `metadata.name`/`generateName`.
 */
export function schemaCelType(s: CelSchemaNode | undefined, resourceRoot = false): CelType | undefined {
  if (!s) return undefined;
  if (s['x-kubernetes-int-or-string'] === true) return 'dyn';
  const node = resourceRoot ? withTypeAndObjectMeta(s) : s;
  const embedded = (c: CelSchemaNode | undefined) => c?.['x-kubernetes-embedded-resource'] === true;
  switch (node.type) {
    case 'array': {
      const items = child(node.items);
      const t = schemaCelType(items, embedded(items));
      return t === undefined ? undefined : { list: t };
    }
    case 'object': {
      const addl = child(node.additionalProperties);
      if (addl) {
        const t = schemaCelType(addl, embedded(addl));
        return t === undefined ? undefined : { map: t };
      }
      const fields: Record<string, CelType> = {};
      for (const [name, p] of Object.entries(child(node.properties) ?? {})) {
        const prop = child(p);
        const t = schemaCelType(prop, embedded(prop));
        const escaped = escapeCelName(name);
        if (t !== undefined && escaped !== undefined) fields[escaped] = t;
      }
      return { object: fields };
    }
    case 'string':
      return STRING_FORMATS[typeof node.format === 'string' ? node.format : ''] ?? 'string';
    case 'boolean':
      return 'bool';
    case 'number':
      return 'double';
    case 'integer':
      return 'int';
    default:
      return undefined;
  }
}

function isAstNode(v: unknown): v is CelAstNode {
  return v !== null && typeof v === 'object' && typeof (v as CelAstNode).op === 'string' && 'args' in v;
}

/** Every node of a parse tree in source order (children of arrays and nested arrays included). */
function* nodes(v: unknown): Generator<CelAstNode> {
  if (Array.isArray(v)) {
    for (const x of v) yield* nodes(x);
    return;
  }
  if (!isAstNode(v)) return;
  yield v;
  yield* nodes(v.args);
}

/** A `has(x.f)` call of a parse tree: the call, the selection `x.f` it tests. */
function hasSelection(n: CelAstNode): CelAstNode | undefined {
  if (n.op !== 'call' || !Array.isArray(n.args) || n.args[0] !== 'has') return undefined;
  const fnArgs = n.args[1];
  if (!Array.isArray(fnArgs) || fnArgs.length !== 1) return undefined;
  const sel = fnArgs[0];
  return isAstNode(sel) && sel.op === '.' && Array.isArray(sel.args) && isAstNode(sel.args[0])
    ? sel
    : undefined;
}

/** A rule rewritten for a CEL evaluator, and where each of its characters came from in the rule as written. */
export interface CelRewrite {
  readonly source: string;
  /** The offset in the original rule of the rewritten rule's character at `offset`. */
  position(offset: number): number;
}

/**
 * `src` with each `has(x.f)` written `(x).?f.hasValue()` — the same presence test as an optional selection, which
 * cel-js type-checks in full (its `has()` checks only the variable at the bottom of `x`, and refuses an `x` that is
 * not a chain of field selections on a variable, such as `self.items[0]`, which cel-go and kube-apiserver accept).
 * With `onlyUnsupported`, only the `has()` calls whose `x` cel-js cannot take are rewritten (for evaluation).
 * `undefined` when there is nothing to rewrite. `ast` is cel-js's parse tree of `src`.
 */
export function rewriteHasMacros(
  src: string,
  ast: CelAstNode,
  onlyUnsupported = false,
): CelRewrite | undefined {
  const calls: { call: CelAstNode; sel: CelAstNode }[] = [];
  for (const n of nodes(ast)) {
    const sel = hasSelection(n);
    if (!sel) continue;
    if (onlyUnsupported) {
      let bottom = (sel.args as unknown[])[0] as CelAstNode;
      while (bottom.op === '.' && isAstNode((bottom.args as unknown[])[0]))
        bottom = (bottom.args as unknown[])[0] as CelAstNode;
      if (bottom.op === 'id') continue;
    }
    calls.push({ call: n, sel });
  }
  if (calls.length === 0) return undefined;
  const out: string[] = [];
  const from: number[] = [];
  const emit = (text: string, origin: number | ((i: number) => number)) => {
    for (let i = 0; i < text.length; i++) {
      out.push(text[i] as string);
      from.push(typeof origin === 'number' ? origin : origin(i));
    }
  };
  const copy = (a: number, b: number) => {
    let i = a;
    while (i < b) {
      const c = calls.find((x) => x.call.start === i && x.call.end <= b);
      if (!c) {
        emit(src[i] as string, i);
        i++;
        continue;
      }
      const operand = (c.sel.args as unknown[])[0] as CelAstNode;
      const field = (c.sel.args as unknown[])[1] as string;
      // cel-go reports a has() test of an undeclared field at the macro's '(': the field maps two characters
      // after it, as an optional selection `x.?f` is reported at its '.', two characters before `f`
      const paren = src.indexOf('(', c.call.start);
      emit('(', c.call.start);
      copy(operand.start, operand.end);
      emit(').?', c.sel.pos - 1);
      emit(field, paren + 2);
      emit('.hasValue()', c.call.start);
      i = c.call.end;
    }
  };
  copy(0, src.length);
  const source = out.join('');
  return {
    source,
    position: (offset) => (offset >= from.length ? src.length : (from[offset] ?? 0)),
  };
}

/**
 * The first field selection of a type-checked parse tree (`x.f` or `x.?f`, in source order) that names a field
 * the object type of `x` does not declare, as cel-go refuses it (`undefined field 'f'`) where cel-js lets it through
 * (an optional selection, or a selection on an optional, yields `dyn` for a missing field). `fieldsOf` gives the
 * declared fields of an object type by its cel-js type name, `undefined` for any other type.
 */
export function undeclaredFieldSelection(
  ast: CelAstNode,
  fieldsOf: (typeName: string) => ReadonlySet<string> | undefined,
): { node: CelAstNode; field: string } | undefined {
  for (const n of nodes(ast)) {
    if ((n.op !== '.' && n.op !== '.?') || !Array.isArray(n.args)) continue;
    const [operand, field] = n.args as [unknown, unknown];
    if (!isAstNode(operand) || typeof field !== 'string') continue;
    let t = operand.checkedType;
    if (t?.kind === 'optional') t = t.valueType;
    const fields = t ? fieldsOf(t.name) : undefined;
    if (fields && !fields.has(field)) return { node: n, field };
  }
  return undefined;
}

/**
 * kube-apiserver 1.32 also finds a property named by a CEL reserved word under the word itself (`self.namespace`
 * as `self.__namespace__`; apiserver `DeclTypeProvider` with `recognizeKeywordAsFieldName`).
 */
export function withReservedAliases<T>(fields: Record<string, T>): Record<string, T> {
  for (const [k, f] of Object.entries(fields)) {
    const word = /^__([a-z]+)__$/.exec(k)?.[1];
    if (word && CEL_RESERVED_WORDS.has(word) && !(word in fields)) fields[word] = f;
  }
  return fields;
}

export { estimateCelCost } from './cel-cost.js';
export {
  CEL_CRD_COST_LIMIT,
  CEL_RULE_COST_LIMIT,
  type CelSizeType,
  celCostMessage,
  celSizeType,
  ruleCardinality,
} from './cel-size.js';
