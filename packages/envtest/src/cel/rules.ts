/**
 * CRD validation rules (`x-kubernetes-validations`), compiled and evaluated as kube-apiserver 1.32 does
 * (apiextensions-apiserver `schema/cel`): each rule is type-checked against the type of the schema node it sits
 * on (`self`; `oldSelf` of the same type when the rule uses it; at the resource root `self` also has `apiVersion`,
 * `kind` and `metadata.name`/`generateName`), must be a `bool` (a `messageExpression` a `string`), and runs on
 * every non-null value of that node. A failing rule reports `field.Invalid(<path>, <schema type>, <message>)` —
 * or Forbidden/Required/Duplicate per `reason` — at the node's path plus `fieldPath`; the message is
 * `messageExpression`'s result, else `message`, else `failed rule: <rule>`. Transition rules (using `oldSelf`) run
 * only on update, where the old value correlates (object properties, map keys, list-type=map items by key), unless
 * `optionalOldSelf` is set. A rule that does not use `oldSelf` is not reported for a value unchanged since the old
 * object (ratcheting). Runtime errors are reported as `<error> evaluating rule: <rule>`. Expressions are evaluated
 * by `@marcbachmann/cel-js` with the Kubernetes libraries of `k8s-library.ts`; compile errors are rendered in
 * cel-go's `ERROR: <input>:<line>:<col>: <message>` form with the source snippet and caret.
 */
import { Environment, Optional } from '@marcbachmann/cel-js';
import type { FieldError } from '../errors.js';
import { goQuote } from '../schema/go-format.js';
import { jsonEqual, type SchemaNode } from '../schema/json-value.js';
import { registerKubernetesLibraries } from './k8s-library.js';

/** One `x-kubernetes-validations` entry. */
export interface ValidationRule {
  readonly rule?: string;
  readonly message?: string;
  readonly messageExpression?: string;
  readonly reason?: string;
  readonly fieldPath?: string;
  readonly optionalOldSelf?: boolean;
}

type Program = (ctx: Record<string, unknown>) => unknown;

interface CompiledRule {
  readonly rule: ValidationRule;
  readonly program?: Program;
  readonly messageProgram?: Program;
  readonly usesOldSelf: boolean;
  readonly fieldPath: string;
}

/** The rules of one schema node and of the nodes below it that have rules. */
export interface RuleNode {
  readonly schema: SchemaNode;
  readonly rules: readonly CompiledRule[];
  readonly properties: Readonly<Record<string, RuleNode>>;
  readonly additionalProperties?: RuleNode;
  readonly items?: RuleNode;
}

/** A rule that does not compile, where it is in the schema. */
export interface RuleCompileError {
  /** Path of the schema node, e.g. `openAPIV3Schema.properties[spec]`. */
  readonly schemaPath: string;
  readonly index: number;
  readonly field: 'rule' | 'messageExpression';
  readonly rule: ValidationRule;
  readonly detail: string;
}

let baseEnv: Environment | undefined;

/** The shared environment: Kubernetes 1.32 options (optional types, homogeneous literals) and libraries. */
function base(): Environment {
  if (!baseEnv) {
    baseEnv = registerKubernetesLibraries(
      new Environment({
        enableOptionalTypes: true,
        homogeneousAggregateLiterals: true,
        unlistedVariablesAreDyn: false,
      }),
    );
  }
  return baseEnv;
}

const evalEnvs: Partial<Record<'plain' | 'optional', Environment>> = {};

/** Evaluation runs untyped (`dyn`), on values converted by the schema; `oldSelf` is optional<dyn> for optionalOldSelf. */
function evaluator(optionalOldSelf = false): Environment {
  const k = optionalOldSelf ? 'optional' : 'plain';
  evalEnvs[k] ??= base()
    .clone()
    .registerVariable('self', 'dyn')
    .registerVariable('oldSelf', optionalOldSelf ? 'optional<dyn>' : 'dyn');
  return evalEnvs[k];
}

function node(v: unknown): SchemaNode | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as SchemaNode) : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

const IDENT = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/** The CEL type name of a schema node, registering object types on `env` (apiserver/pkg/cel SchemaDeclType). */
function declType(env: Environment, s: SchemaNode | undefined, names: { n: number }, root = false): string {
  if (!s) return 'dyn';
  if (s['x-kubernetes-int-or-string'] === true) return 'dyn';
  switch (s.type) {
    case 'integer':
      return 'int';
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
    case 'string':
      return 'string';
    case 'array':
      return `list<${declType(env, node(s.items), names)}>`;
    case 'object': {
      const addl = node(s.additionalProperties);
      if (addl && !s.properties) return `map<string, ${declType(env, addl, names)}>`;
      if (!s.properties && s['x-kubernetes-preserve-unknown-fields'] === true && !root) return 'dyn';
      const fields: Record<string, string> = {};
      for (const [k, p] of Object.entries(node(s.properties) ?? {}))
        if (IDENT.test(k) && !RESERVED.has(k)) fields[k] = declType(env, node(p), names);
      if (root || s['x-kubernetes-embedded-resource'] === true) {
        const meta = `Object${names.n++}`;
        env.registerType(meta, { fields: { name: 'string', generateName: 'string' } });
        fields.apiVersion = 'string';
        fields.kind = 'string';
        fields.metadata = meta;
      }
      const name = `Object${names.n++}`;
      env.registerType(name, { fields });
      return name;
    }
    default:
      return 'dyn';
  }
}

const OPS: Record<string, string> = {
  '>': '_>_',
  '<': '_<_',
  '>=': '_>=_',
  '<=': '_<=_',
  '==': '_==_',
  '!=': '_!=_',
  '+': '_+_',
  '-': '_-_',
  '*': '_*_',
  '/': '_/_',
  '%': '_%_',
  in: '@in',
  '&&': '_&&_',
  '||': '_||_',
};

/** cel-go's display of an error at `offset` of `src`: `ERROR: <input>:L:C: msg` + snippet + caret. */
function display(src: string, offset: number, message: string): string {
  const before = src.slice(0, Math.max(0, offset));
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const col = [...src.slice(lineStart, offset)].length;
  const snippet = (src.split('\n')[line - 1] ?? '').replace(/\t/g, ' ');
  const chars = [...snippet];
  let ind = '';
  for (let i = 0; i < col && i < chars.length; i++)
    ind += Buffer.byteLength(chars[i] as string) > 1 ? '\uff0e' : '.';
  ind += chars[col] && Buffer.byteLength(chars[col] as string) > 1 ? '\uff3e' : '^';
  return `ERROR: <input>:${line}:${col + 1}: ${message}\n | ${snippet}\n | ${ind}`;
}

/** Translate an evaluator compile error into cel-go's message and position. */
function compileMessage(src: string, err: unknown): string {
  const e = err as { message?: string; node?: { pos?: number }; range?: { start?: number } };
  const first = String(e.message ?? err).split('\n')[0] as string;
  let pos = e.node?.pos ?? e.range?.start ?? 0;
  let msg = first;
  const undefinedField = /^No such key: (.+)$/.exec(first);
  const overload = /^no such overload: (\S+) (\S+) (\S+)$/.exec(first);
  const unknownVar = /^Unknown variable: (\S+)$/i.exec(first);
  if (undefinedField) {
    msg = `undefined field '${undefinedField[1]}'`;
    // cel-go places a field selection at its '.'
    pos = Math.max(0, pos - 1);
  } else if (overload) {
    const op = overload[2] as string;
    msg = `found no matching overload for '${OPS[op] ?? op}' applied to '(${overload[1]}, ${overload[3]})'`;
    // cel-go places an operator call at the operator
    const at = src.indexOf(` ${op} `, pos);
    if (at >= 0) pos = at + 1;
  } else if (unknownVar) {
    msg = `undeclared reference to '${unknownVar[1]}' (in container '')`;
  } else if (/^(Unexpected|Expected|Invalid|Unterminated)/.test(first)) {
    msg = `Syntax error: ${first}`;
  }
  return display(src, pos, msg);
}

function resultType(env: Environment, src: string): { type?: string; error?: string } {
  try {
    const r = env.check(src) as { valid: boolean; type?: string; error?: unknown };
    if (!r.valid) return { error: compileMessage(src, r.error) };
    return { type: r.type };
  } catch (e) {
    return { error: compileMessage(src, e) };
  }
}

function normalizeFieldPath(p: string): string {
  // ".a.b" and ".a['b.c']" as field.Path children: a dotted path, bracketed keys as [key]
  return p
    .trim()
    .replace(/^\./, '')
    .replace(/\['([^']*)'\]/g, '[$1]');
}

/**
 * Compile the rules of `schema` (a CRD version's openAPIV3Schema). Returns the rule tree (undefined when the
 * schema has no rules) and the rules that do not compile, with the detail the server reports.
 */
export function compileRules(
  schema: SchemaNode,
  schemaPath = 'openAPIV3Schema',
): { tree: RuleNode | undefined; errors: RuleCompileError[] } {
  const errors: RuleCompileError[] = [];
  const names = { n: 0 };
  const walk = (s: SchemaNode, path: string, root: boolean): RuleNode | undefined => {
    const list = Array.isArray(s['x-kubernetes-validations'])
      ? (s['x-kubernetes-validations'] as ValidationRule[])
      : [];
    const rules: CompiledRule[] = [];
    if (list.length > 0) {
      const makeEnv = (optionalOldSelf: boolean) => {
        const e = base().clone();
        const t = declType(e, s, names, root);
        return e
          .registerVariable('self', t)
          .registerVariable('oldSelf', optionalOldSelf ? `optional<${t}>` : t);
      };
      const env = makeEnv(false);
      let optEnvCache: Environment | undefined;
      const optEnv = () => {
        optEnvCache ??= makeEnv(true);
        return optEnvCache;
      };
      list.forEach((rule, index) => {
        const src = String(rule.rule ?? '').trim();
        if (!src) return;
        const usesOldSelf = /\boldSelf\b/.test(src);
        const checked = resultType(rule.optionalOldSelf === true ? optEnv() : env, src);
        if (checked.error)
          errors.push({
            schemaPath: path,
            index,
            field: 'rule',
            rule,
            detail: `compilation failed: ${checked.error}`,
          });
        else if (checked.type !== 'bool' && checked.type !== 'dyn')
          errors.push({
            schemaPath: path,
            index,
            field: 'rule',
            rule,
            detail: 'cel expression must evaluate to a bool',
          });
        let messageProgram: Program | undefined;
        const msgSrc = String(rule.messageExpression ?? '').trim();
        if (msgSrc) {
          const m = resultType(env, msgSrc);
          if (m.error)
            errors.push({
              schemaPath: path,
              index,
              field: 'messageExpression',
              rule,
              detail: `messageExpression compilation failed: ${m.error}`,
            });
          else if (m.type !== 'string' && m.type !== 'dyn')
            errors.push({
              schemaPath: path,
              index,
              field: 'messageExpression',
              rule,
              detail: 'messageExpression must evaluate to a string',
            });
          else messageProgram = evaluator().parse(msgSrc) as unknown as Program;
        }
        rules.push({
          rule,
          program: checked.error
            ? undefined
            : (evaluator(rule.optionalOldSelf === true).parse(src) as unknown as Program),
          ...(messageProgram ? { messageProgram } : {}),
          usesOldSelf,
          fieldPath: rule.fieldPath ? normalizeFieldPath(rule.fieldPath) : '',
        });
      });
    }
    const properties: Record<string, RuleNode> = {};
    for (const [k, p] of Object.entries(node(s.properties) ?? {})) {
      const n = node(p);
      const sub = n ? walk(n, `${path}.properties[${k}]`, false) : undefined;
      if (sub) properties[k] = sub;
    }
    const addlSchema = node(s.additionalProperties);
    const additionalProperties = addlSchema
      ? walk(addlSchema, `${path}.additionalProperties`, false)
      : undefined;
    const itemsSchema = node(s.items);
    const items = itemsSchema ? walk(itemsSchema, `${path}.items`, false) : undefined;
    if (rules.length === 0 && Object.keys(properties).length === 0 && !additionalProperties && !items)
      return undefined;
    return {
      schema: s,
      rules,
      properties,
      ...(additionalProperties ? { additionalProperties } : {}),
      ...(items ? { items } : {}),
    };
  };
  const tree = walk(schema, schemaPath, true);
  return { tree, errors };
}

const admissionEnvs = new Map<string, Environment>();

/**
 * An untyped evaluation environment with the Kubernetes libraries and the given `dyn` variables (admission
 * policies: object, oldObject, request, params, namespaceObject, variables).
 */
export function dynEvaluator(variables: readonly string[]): Environment {
  const key = variables.join(',');
  let env = admissionEnvs.get(key);
  if (!env) {
    env = base().clone();
    for (const v of variables) env.registerVariable(v, 'dyn');
    admissionEnvs.set(key, env);
  }
  return env;
}

/** UnstructuredToVal: JSON → CEL values by the schema (integers as int, numbers as double). */
export function toCel(v: unknown, s: SchemaNode | undefined): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') {
    if (s?.type === 'number') return v;
    return Number.isInteger(v) ? BigInt(v) : v;
  }
  if (Array.isArray(v)) {
    const items = node(s?.items);
    return v.map((x) => toCel(x, items));
  }
  if (isObject(v)) {
    const props = node(s?.properties) ?? {};
    const addl = node(s?.additionalProperties);
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toCel(x, node(props[k]) ?? addl);
    return out;
  }
  return v;
}

function evalErrorMessage(e: unknown): string {
  const first = String((e as Error)?.message ?? e).split('\n')[0] as string;
  const m = /^No such key: (.+)$/.exec(first);
  if (m) return `no such key: ${m[1]}`;
  return first;
}

function ruleErrorString(rule: ValidationRule): string {
  return rule.message?.trim() ? rule.message.trim() : String(rule.rule ?? '').trim();
}

function ruleMessageOrDefault(rule: ValidationRule): string {
  return rule.message?.trim() ? rule.message.trim() : `failed rule: ${ruleErrorString(rule)}`;
}

function childPath(path: string, k: string): string {
  return path === '' ? k : `${path}.${k}`;
}

function errorForReason(path: string, type: string, detail: string, reason: string | undefined): FieldError {
  const field = path === '' ? '<nil>' : path;
  switch (reason) {
    case 'FieldValueForbidden':
      return { type: 'FieldValueForbidden', field, detail: `Forbidden: ${detail}` };
    case 'FieldValueRequired':
      return { type: 'FieldValueRequired', field, detail: `Required value: ${detail}` };
    case 'FieldValueDuplicate':
      return { type: 'FieldValueDuplicate', field, detail: `Duplicate value: ${goQuote(type)}` };
    default:
      return { type: 'FieldValueInvalid', field, detail: `Invalid value: ${goQuote(type)}: ${detail}` };
  }
}

function schemaType(s: SchemaNode): string {
  return typeof s.type === 'string' ? s.type : '';
}

function evalRules(
  n: RuleNode,
  path: string,
  value: unknown,
  old: unknown,
  hasOld: boolean,
  errs: FieldError[],
): void {
  if (n.rules.length === 0) return;
  const type = schemaType(n.schema);
  const self = toCel(value, n.schema);
  const oldSelf = hasOld ? toCel(old, n.schema) : undefined;
  const unchanged = hasOld && jsonEqual(value, old);
  for (const r of n.rules) {
    if (!r.program) continue;
    const optional = r.rule.optionalOldSelf === true;
    if (r.usesOldSelf && !hasOld && !optional) continue;
    const ctx: Record<string, unknown> = { self };
    // optionalOldSelf: oldSelf is optional.of(old), or optional.none() on create
    if (r.usesOldSelf) ctx.oldSelf = optional ? (hasOld ? Optional.of(oldSelf) : Optional.none()) : oldSelf;
    let result: unknown;
    try {
      result = r.program(ctx);
    } catch (e) {
      const msg = evalErrorMessage(e);
      const field = path === '' ? '<nil>' : path;
      if (msg.startsWith('no such overload'))
        errs.push({
          type: 'FieldValueInvalid',
          field,
          detail: `Invalid value: ${goQuote(type)}: 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(r.rule)}`,
        });
      else
        errs.push({
          type: 'FieldValueInvalid',
          field,
          detail: `Invalid value: ${goQuote(type)}: ${msg} evaluating rule: ${ruleErrorString(r.rule)}`,
        });
      continue;
    }
    if (result === true) continue;
    if (!r.usesOldSelf && unchanged) continue;
    const at = r.fieldPath ? childPath(path, r.fieldPath) : path;
    let message = ruleMessageOrDefault(r.rule);
    if (r.messageProgram) {
      try {
        const m = r.messageProgram(ctx);
        const t = typeof m === 'string' ? m.trim() : '';
        if (t && !/\n/.test(t) && t.length <= 5 * 1024) message = t;
      } catch {
        // the server falls back to the rule's message when messageExpression fails
      }
    }
    errs.push(errorForReason(at, type, message, r.rule.reason));
  }
}

function walk(
  n: RuleNode,
  path: string,
  value: unknown,
  old: unknown,
  hasOld: boolean,
  errs: FieldError[],
): void {
  if (value === null || value === undefined) return;
  evalRules(n, path, value, old, hasOld, errs);
  if (Array.isArray(value)) {
    if (!n.items) return;
    const keys = n.schema['x-kubernetes-list-map-keys'];
    const mapList = n.schema['x-kubernetes-list-type'] === 'map' && Array.isArray(keys) && Array.isArray(old);
    const keyOf = (x: unknown) =>
      isObject(x) ? JSON.stringify((keys as string[]).map((k) => x[k] ?? null)) : '';
    const byKey = new Map<string, unknown>();
    if (mapList) for (const o of old as unknown[]) byKey.set(keyOf(o), o);
    value.forEach((x, i) => {
      const k = mapList ? keyOf(x) : '';
      const found = mapList && byKey.has(k);
      walk(n.items as RuleNode, `${path}[${i}]`, x, found ? byKey.get(k) : undefined, found, errs);
    });
    return;
  }
  if (!isObject(value)) return;
  const correlatable = n.schema['x-kubernetes-map-type'] !== 'atomic';
  const oldObj = correlatable && isObject(old) ? old : undefined;
  if (n.additionalProperties)
    for (const [k, x] of Object.entries(value)) {
      if (node(n.schema.properties)?.[k]) continue;
      walk(
        n.additionalProperties,
        `${path}[${k}]`,
        x,
        oldObj?.[k],
        !!oldObj && Object.hasOwn(oldObj, k),
        errs,
      );
    }
  for (const [k, x] of Object.entries(value)) {
    const sub = n.properties[k];
    if (sub) walk(sub, childPath(path, k), x, oldObj?.[k], !!oldObj && Object.hasOwn(oldObj, k), errs);
  }
}

/**
 * Run the rules of `tree` on `obj` (the whole custom resource; `old` on update). Errors are in the server's
 * order for one node (rules in order, then properties in the object's key order).
 */
export function validateRules(
  tree: RuleNode,
  obj: Record<string, unknown>,
  old?: Record<string, unknown>,
): FieldError[] {
  const errs: FieldError[] = [];
  walk(tree, '', obj, old, old !== undefined, errs);
  return errs;
}

/** `%#v` of an `apiextensions.ValidationRule`, as the server prints a rule in CRD validation errors. */
export function goValidationRule(r: ValidationRule): string {
  const ptr = (v: string | undefined, t: string) =>
    v === undefined ? `(*${t})(nil)` : `(*${t})(${goQuote(v)})`;
  return `apiextensions.ValidationRule{Rule:${goQuote(r.rule ?? '')}, Message:${goQuote(r.message ?? '')}, MessageExpression:${goQuote(r.messageExpression ?? '')}, Reason:${ptr(r.reason, 'apiextensions.FieldValueErrorReason')}, FieldPath:${goQuote(r.fieldPath ?? '')}, OptionalOldSelf:${r.optionalOldSelf === undefined ? '(*bool)(nil)' : `(*bool)(${r.optionalOldSelf})`}}`;
}
