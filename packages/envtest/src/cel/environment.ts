/**
 * The CEL environments of CRD validation rules and admission policies: one base environment with
 * kube-apiserver 1.32's options and the Kubernetes libraries, the typed declaration of a schema node
 * (apiserver pkg/cel `SchemaDeclType`), and compile errors rendered as cel-go prints them.
 */

import { type CelType, schemaCelType } from '@kubeloop/core/cel';
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
  names: { n: number },
  root = false,
): string {
  const render = (t: CelType): string => {
    if (typeof t === 'string') return t === 'timestamp' || t === 'duration' || t === 'bytes' ? 'string' : t;
    if ('list' in t) return `list<${render(t.list)}>`;
    if ('map' in t) return `map<string, ${render(t.map)}>`;
    const fields: Record<string, string> = {};
    for (const [k, f] of Object.entries(t.object)) fields[k] = render(f);
    const name = `Object${names.n++}`;
    env.registerType(name, { fields });
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

/** The type-check result of `src` on `env`: its CEL type name, or the compile error as cel-go prints it. */
export function resultType(env: Environment, src: string): { type?: string; error?: string } {
  try {
    const r = env.check(src) as { valid: boolean; type?: string; error?: unknown };
    if (!r.valid) return { error: compileMessage(src, r.error) };
    return { type: r.type };
  } catch (e) {
    return { error: compileMessage(src, e) };
  }
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
