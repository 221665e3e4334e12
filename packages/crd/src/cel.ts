import {
  CEL_CRD_COST_LIMIT,
  CEL_RULE_COST_LIMIT,
  type CelAstNode,
  type CelSchemaNode,
  type CelType,
  celCostMessage,
  celSizeType,
  estimateCelCost,
  rewriteHasMacros,
  ruleCardinality,
  schemaCelType,
  undeclaredFieldSelection,
  withReservedAliases,
} from '@kubeloop/core/cel';
import { Environment } from '@marcbachmann/cel-js';
import { CelCompileError, SchemaError } from './errors.js';
import type { JSONSchemaProps } from './types.js';

/**
 * Compile checks of `x-kubernetes-validations` with `@marcbachmann/cel-js` (the project's CEL evaluator): every rule
 * and `messageExpression` is parsed and type-checked with `self` (and `oldSelf` for transition rules) typed from the
 * schema node it sits on, as kube-apiserver compiles each rule against the node's declared type when a CRD is
 * created (apiextensions-apiserver `pkg/apiserver/schema/cel`, `compilation.go`). A rule must yield a bool, a
 * `messageExpression` a string; `oldSelf` is refused below a list that is not a map (the uncorrelatable part of
 * the schema, where the server cannot pair an item with its old value).
 *
 * The Kubernetes CEL libraries (lists, regex, url, quantity, ip, cidr, format) are declared with their signatures
 * so rules that use them type-check; their evaluation is envtest's / the server's business, not this module's.
 * Functions the evaluator cannot declare (namespaced: `sets.*`, `strings.quote`) are accepted unchecked.
 */
export function checkRules(root: JSONSchemaProps, rootPath: string): void {
  const costs = { total: 0n, known: true };
  walk(root, rootPath, true, true, [], costs);
  if (costs.known && costs.total > CEL_CRD_COST_LIMIT)
    throw new SchemaError(
      rootPath,
      `Forbidden: ${celCostMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', costs.total, CEL_CRD_COST_LIMIT)}`,
    );
}

/**
 * The estimated cost of a compiled rule (or messageExpression) as kube-apiserver 1.32 estimates it (see
 * `@kubeloop/core/cel` `estimateCelCost`); throws the server's Forbidden error over the per-rule limit. A rule the
 * estimator does not know is accepted, and the CRD's total is then not checked.
 */
function checkCost(
  env: Environment,
  node: JSONSchemaProps,
  root: boolean,
  ancestors: readonly JSONSchemaProps[],
  where: string,
  field: string,
  src: string,
  costs: { total: bigint; known: boolean },
): void {
  const type = celSizeType(node as CelSchemaNode, root || node['x-kubernetes-embedded-resource'] === true);
  let ast: CelAstNode | undefined;
  try {
    ast = (env.parse(src) as unknown as Parsed).ast;
  } catch {
    ast = undefined;
  }
  const est = type && ast ? estimateCelCost(ast, type) : undefined;
  if (!type || !est) {
    costs.known = false;
    return;
  }
  const cardinality = field.endsWith('.rule')
    ? ruleCardinality(ancestors as CelSchemaNode[], type.minSize)
    : 1n;
  const cost = est.max * cardinality;
  costs.total += cost;
  if (cost > CEL_RULE_COST_LIMIT) {
    const what = field.endsWith('.rule') ? 'estimated rule cost' : 'estimated messageExpression cost';
    throw new SchemaError(where, `${field}: Forbidden: ${celCostMessage(what, cost, CEL_RULE_COST_LIMIT)}`);
  }
}

function walk(
  node: JSONSchemaProps,
  path: string,
  correlatable: boolean,
  isRoot: boolean,
  ancestors: readonly JSONSchemaProps[],
  costs: { total: bigint; known: boolean },
): void {
  const rules = node['x-kubernetes-validations'] ?? [];
  if (rules.length > 0) {
    rules.forEach((r, i) => {
      const where = path;
      const transition = /\boldSelf\b/.test(r.rule);
      if (transition && !correlatable)
        throw new SchemaError(
          where,
          `x-kubernetes-validations[${i}].rule: Invalid value: ${JSON.stringify(r.rule)}: oldSelf cannot be used on the uncorrelatable portion of the schema (below a list that is not x-kubernetes-list-type: map)`,
        );
      const { env, fields } = environment(node, isRoot, r.optionalOldSelf === true);
      const checked = check(env, r.rule, fields);
      if (!checked.valid && !tolerated(checked.error))
        throw new CelCompileError(where, r.rule, firstLine(checked.error));
      if (checked.valid && checked.type !== 'bool' && checked.type !== 'dyn')
        throw new CelCompileError(where, r.rule, `rule must evaluate to a bool, not ${checked.type}`);
      // a rule accepted unchecked (a namespaced function: sets.*) is still estimated from its parse tree
      checkCost(env, node, isRoot, ancestors, where, `x-kubernetes-validations[${i}].rule`, r.rule, costs);
      if (r.messageExpression !== undefined) {
        const m = check(env, r.messageExpression, fields);
        if (!m.valid && !tolerated(m.error))
          throw new CelCompileError(where, r.messageExpression, firstLine(m.error));
        if (m.valid && m.type !== 'string' && m.type !== 'dyn')
          throw new CelCompileError(
            where,
            r.messageExpression,
            `messageExpression must evaluate to a string, not ${m.type}`,
          );
        if (m.valid || tolerated(m.error))
          checkCost(
            env,
            node,
            isRoot,
            ancestors,
            where,
            `x-kubernetes-validations[${i}].messageExpression`,
            r.messageExpression,
            costs,
          );
        else costs.known = false;
      }
    });
  }
  for (const [k, child] of Object.entries(node.properties ?? {}))
    walk(child, path ? `${path}.${k}` : k, correlatable, false, [...ancestors, node], costs);
  if (typeof node.additionalProperties === 'object')
    walk(node.additionalProperties, `${path}[*]`, correlatable, false, [...ancestors, node], costs);
  if (node.items)
    walk(
      node.items,
      `${path}[*]`,
      correlatable && node['x-kubernetes-list-type'] === 'map',
      false,
      [...ancestors, node],
      costs,
    );
}

/** The evaluator's message, a missing field named as cel-go names it (`undefined field 'f'`). */
function firstLine(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  const first = msg.split('\n')[0] ?? msg;
  const key = /^No such key: (.+)$/.exec(first);
  return key ? `undefined field '${key[1]}'` : first;
}

// cel-js reports a namespaced function (sets.contains, strings.quote) as an unknown variable
const NAMESPACES = /^Unknown variable: (sets|strings|format|math|base64|lists|optional)$/;
function tolerated(err: unknown): boolean {
  return NAMESPACES.test(firstLine(err));
}

type Parsed = { ast: CelAstNode; check(): { valid: boolean; type?: string; error?: unknown } };

/**
 * Type-check `src` as kube-apiserver does: `has(x.f)` is checked as `(x).?f.hasValue()` (cel-js's `has()` checks
 * only the variable at the bottom of `x`), and a selection of a field its object type does not declare is refused
 * (`undefined field 'f'`), also where cel-js lets it through (`has()`, `.?`).
 */
function check(
  env: Environment,
  src: string,
  fields: ReadonlyMap<string, ReadonlySet<string>>,
): { valid: boolean; type?: string; error?: unknown } {
  try {
    const rewrite = rewriteHasMacros(src, (env.parse(src) as unknown as Parsed).ast);
    const parsed = env.parse(rewrite ? rewrite.source : src) as unknown as Parsed;
    const r = parsed.check();
    if (!r.valid) return r;
    const undeclared = undeclaredFieldSelection(parsed.ast, (name) => fields.get(name));
    if (undeclared) return { valid: false, error: new Error(`undefined field '${undeclared.field}'`) };
    return r;
  } catch (error) {
    return { valid: false, error };
  }
}

const SCALARS: Readonly<Record<string, string>> = {
  timestamp: 'google.protobuf.Timestamp',
  duration: 'google.protobuf.Duration',
};

/**
 * Declares on `env` the type kube-apiserver gives a schema node (`schemaCelType`: escaped field names,
 * `apiVersion`/`kind`/`metadata` at a resource root), each object type as `Object<n>` whose declared field names
 * go to `fields`; returns the type's name.
 */
function declare(env: Environment, t: CelType | undefined, fields: Map<string, ReadonlySet<string>>): string {
  if (t === undefined) return 'dyn';
  if (typeof t === 'string') return SCALARS[t] ?? t;
  if ('list' in t) return `list<${declare(env, t.list, fields)}>`;
  if ('map' in t) return `map<string, ${declare(env, t.map, fields)}>`;
  const decl: Record<string, string> = {};
  for (const [k, f] of Object.entries(t.object)) decl[k] = declare(env, f, fields);
  withReservedAliases(decl);
  const name = `Object${fields.size}`;
  env.registerType(name, { fields: decl });
  fields.set(name, new Set(Object.keys(decl)));
  return name;
}

function environment(
  node: JSONSchemaProps,
  isRoot: boolean,
  optionalOldSelf: boolean,
): { env: Environment; fields: ReadonlyMap<string, ReadonlySet<string>> } {
  const env = kubernetesLibraries(new Environment({ enableOptionalTypes: true }));
  const root = isRoot || node['x-kubernetes-embedded-resource'] === true;
  const fields = new Map<string, ReadonlySet<string>>();
  try {
    const type = declare(env, schemaCelType(node as CelSchemaNode, root), fields);
    env.registerVariable('self', type);
    env.registerVariable('oldSelf', optionalOldSelf ? `optional<${type}>` : type);
  } catch {
    // a type cel-js cannot declare (e.g. a timestamp spelling it does not know): check the rule untyped
    const fallback = kubernetesLibraries(new Environment({ enableOptionalTypes: true }));
    fallback.registerVariable('self', 'dyn');
    fallback.registerVariable('oldSelf', optionalOldSelf ? 'optional<dyn>' : 'dyn');
    return { env: fallback, fields: new Map() };
  }
  return { env, fields };
}

class URL_ {}
class Quantity {}
class IP {}
class CIDR {}
const never = () => {
  throw new Error('the Kubernetes CEL libraries are declared for compile checks only');
};

/** Declares the Kubernetes CEL libraries of kube-apiserver 1.32's base environment (signatures only). */
function kubernetesLibraries(env: Environment): Environment {
  env
    .registerType('URL', URL_)
    .registerType('Quantity', Quantity)
    .registerType('net.IP', IP)
    .registerType('net.CIDR', CIDR);
  const sigs = [
    // lists
    'list<dyn>.isSorted(): bool',
    'list<dyn>.sum(): dyn',
    'list<dyn>.min(): dyn',
    'list<dyn>.max(): dyn',
    'list<dyn>.indexOf(dyn): int',
    'list<dyn>.lastIndexOf(dyn): int',
    // regex
    'string.find(string): string',
    'string.findAll(string): list<string>',
    'string.findAll(string, int): list<string>',
    // strings v2 beyond cel-js
    'string.format(list<dyn>): string',
    'string.charAt(int): string',
    'string.replace(string, string): string',
    'string.replace(string, string, int): string',
    // url
    'url(string): URL',
    'isURL(string): bool',
    'URL.getScheme(): string',
    'URL.getHost(): string',
    'URL.getHostname(): string',
    'URL.getPort(): string',
    'URL.getEscapedPath(): string',
    'URL.getQuery(): map<string, list<string>>',
    // quantity
    'quantity(string): Quantity',
    'isQuantity(string): bool',
    'Quantity.isInteger(): bool',
    'Quantity.asInteger(): int',
    'Quantity.asApproximateFloat(): double',
    'Quantity.sign(): int',
    'Quantity.add(Quantity): Quantity',
    'Quantity.add(int): Quantity',
    'Quantity.sub(Quantity): Quantity',
    'Quantity.sub(int): Quantity',
    'Quantity.isGreaterThan(Quantity): bool',
    'Quantity.isLessThan(Quantity): bool',
    'Quantity.compareTo(Quantity): int',
    // ip
    'ip(string): net.IP',
    'isIP(string): bool',
    'net.IP.family(): int',
    'net.IP.isUnspecified(): bool',
    'net.IP.isLoopback(): bool',
    'net.IP.isLinkLocalMulticast(): bool',
    'net.IP.isLinkLocalUnicast(): bool',
    'net.IP.isGlobalUnicast(): bool',
    // cidr
    'cidr(string): net.CIDR',
    'isCIDR(string): bool',
    'net.CIDR.containsIP(net.IP): bool',
    'net.CIDR.containsIP(string): bool',
    'net.CIDR.containsCIDR(net.CIDR): bool',
    'net.CIDR.containsCIDR(string): bool',
    'net.CIDR.ip(): net.IP',
    'net.CIDR.masked(): net.CIDR',
    'net.CIDR.prefixLength(): int',
  ];
  for (const s of sigs) env.registerFunction(s, never);
  return env;
}
