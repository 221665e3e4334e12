/**
 * The CEL environments of CRD validation rules and admission policies: one base environment with
 * kube-apiserver 1.32's options and the Kubernetes libraries, the typed declaration of a schema node
 * (apiserver pkg/cel `SchemaDeclType`), and compile errors rendered as cel-go prints them.
 */

import {
  type CelAstNode,
  type CelType,
  rewriteHasMacros,
  schemaCelType,
  undeclaredFieldSelection,
  withReservedAliases,
} from '@kubeloop/core/cel';
import { Environment } from '@marcbachmann/cel-js';
import type { SchemaNode } from '../schema/json-value.js';
import { registerKubernetesLibraries } from './k8s-library.js';

let baseEnv: Environment | undefined;

/** The shared environment: Kubernetes 1.32 options (optional types, homogeneous literals) and libraries. */
export function base(): Environment {
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

/**
 * The object types registered by {@link declType} for one CRD (`Object<n>`) with their declared field names, so a
 * selection of a field none declares is refused as cel-go refuses it.
 */
export interface DeclaredTypes {
  n: number;
  readonly fields: Map<string, ReadonlySet<string>>;
}

/** A fresh {@link DeclaredTypes}. */
export function declaredTypes(): DeclaredTypes {
  return { n: 0, fields: new Map() };
}

/** Evaluation runs untyped (`dyn`), on values converted by the schema; `oldSelf` is optional<dyn> for optionalOldSelf. */
export function evaluator(optionalOldSelf = false): Environment {
  const k = optionalOldSelf ? 'optional' : 'plain';
  evalEnvs[k] ??= base()
    .clone()
    .registerVariable('self', 'dyn')
    .registerVariable('oldSelf', optionalOldSelf ? 'optional<dyn>' : 'dyn');
  return evalEnvs[k];
}

/**
 * The CEL type name of a schema node, registering its object types on `env` (`Object<n>`, numbered by `names`):
 * the type kube-apiserver declares (`schemaCelType`, with escaped field names), `dyn` where the server declares
 * none. Strings with a `date`, `date-time`, `duration` or `byte` format stay `string`: values are evaluated as
 * their JSON strings here, not converted to timestamps, durations or bytes.
 */
export function declType(
  env: Environment,
  s: SchemaNode | undefined,
  names: DeclaredTypes,
  root = false,
): string {
  const render = (t: CelType): string => {
    if (typeof t === 'string') return t === 'timestamp' || t === 'duration' || t === 'bytes' ? 'string' : t;
    if ('list' in t) return `list<${render(t.list)}>`;
    if ('map' in t) return `map<string, ${render(t.map)}>`;
    const fields: Record<string, string> = {};
    for (const [k, f] of Object.entries(t.object)) fields[k] = render(f);
    withReservedAliases(fields);
    const name = `Object${names.n++}`;
    env.registerType(name, { fields });
    names.fields.set(name, new Set(Object.keys(fields)));
    return name;
  };
  const t = schemaCelType(s, root || s?.['x-kubernetes-embedded-resource'] === true);
  return t === undefined ? 'dyn' : render(t);
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

/**
 * Translate an evaluator compile error into cel-go's message and position; `at` maps an offset of the checked
 * source (the rule rewritten by `rewriteHasMacros`) back to the rule as written.
 */
function compileMessage(src: string, err: unknown, at: (offset: number) => number = (o) => o): string {
  const e = err as {
    message?: string;
    node?: { pos?: number; op?: string; start?: number };
    range?: { start?: number };
  };
  const first = String(e.message ?? err).split('\n')[0] as string;
  const raw = e.node?.pos ?? e.range?.start;
  let pos = raw === undefined ? 0 : at(raw);
  let msg = first;
  const undefinedField = /^No such key: (.+)$/.exec(first);
  const overload = /^no such overload: (\S+) (\S+) (\S+)$/.exec(first);
  const unknownVar = /^Unknown variable: (\S+)$/i.exec(first);
  const noSelection = /^Cannot index type '([^']+)'$/.exec(first);
  // cel-go places a field selection at its '.' (`x.f`: one before the field, `x.?f`: two)
  const selectionAt = (p: number) => Math.max(0, p - (e.node?.op === '.?' ? 2 : 1));
  if (undefinedField) {
    msg = `undefined field '${undefinedField[1]}'`;
    pos = selectionAt(pos);
  } else if (first === 'has() invalid argument') {
    msg = 'invalid argument to has() macro';
    const op = e.node?.op;
    pos = op === '.' || op === '.?' ? selectionAt(pos) : at(e.node?.start ?? 0);
  } else if (noSelection) {
    msg = `type '${noSelection[1]}' does not support field selection`;
    pos = selectionAt(pos);
  } else if (overload) {
    const op = overload[2] as string;
    msg = `found no matching overload for '${OPS[op] ?? op}' applied to '(${overload[1]}, ${overload[3]})'`;
    // cel-go places an operator call at the operator
    const found = src.indexOf(` ${op} `, pos);
    if (found >= 0) pos = found + 1;
  } else if (unknownVar) {
    msg = `undeclared reference to '${unknownVar[1]}' (in container '')`;
  } else if (/^(Unexpected|Expected|Invalid|Unterminated)/.test(first)) {
    msg = `Syntax error: ${first}`;
  }
  return display(src, pos, msg);
}

type Parsed = { ast: CelAstNode; check(): { valid: boolean; type?: string; error?: unknown } };

/**
 * The type-check result of `src` on `env`: its CEL type name, or the compile error as cel-go prints it. `has(x.f)`
 * is checked as `(x).?f.hasValue()` (see `rewriteHasMacros`), and a selection of a field that the object type
 * (one of `declared`) does not declare is refused, also where cel-js lets it through (`has()`, `.?`).
 */
export function resultType(
  env: Environment,
  src: string,
  declared?: DeclaredTypes,
): { type?: string; error?: string } {
  try {
    const rewrite = rewriteHasMacros(src, (env.parse(src) as unknown as Parsed).ast);
    const at = rewrite ? rewrite.position : (o: number) => o;
    const parsed = env.parse(rewrite ? rewrite.source : src) as unknown as Parsed;
    const r = parsed.check();
    if (!r.valid) return { error: compileMessage(src, r.error, at) };
    const undeclared = declared
      ? undeclaredFieldSelection(parsed.ast, (name) => declared.fields.get(name))
      : undefined;
    if (undeclared)
      return {
        error: compileMessage(
          src,
          { message: `No such key: ${undeclared.field}`, node: undeclared.node },
          at,
        ),
      };
    return { type: r.type };
  } catch (e) {
    return { error: compileMessage(src, e) };
  }
}

/**
 * The source envtest evaluates for a rule: the rule itself, or with the `has()` calls cel-js cannot evaluate
 * (`has(self.items[0].f)`) written as optional selections.
 */
export function evaluatedSource(env: Environment, src: string): string {
  return rewriteHasMacros(src, (env.parse(src) as unknown as Parsed).ast, true)?.source ?? src;
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
