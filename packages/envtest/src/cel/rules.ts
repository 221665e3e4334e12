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

import { goQuote } from '@kubeloop/core/go-format';
import type { Environment } from '@marcbachmann/cel-js';
import { node, type SchemaNode } from '../schema/json-value.js';
import { base, declaredTypes, declType, evaluatedSource, evaluator, resultType } from './environment.js';
import { RuleCosts } from './rule-cost.js';
import type { CompiledRule, Program, RuleCompileError, RuleNode, ValidationRule } from './rule-types.js';

export { dynEvaluator } from './environment.js';
export { toCel, validateRules } from './evaluate.js';
export type { RuleCompileError, RuleNode, ValidationRule } from './rule-types.js';

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
  const names = declaredTypes();
  const costs = new RuleCosts();
  const walk = (
    s: SchemaNode,
    path: string,
    root: boolean,
    ancestors: readonly SchemaNode[],
  ): RuleNode | undefined => {
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
        const checked = resultType(rule.optionalOldSelf === true ? optEnv() : env, src, names);
        // the server reports a rule's estimated cost before its compile errors, the optionalOldSelf error last
        if (!checked.error)
          errors.push(
            ...costs.observe(env, s, root, ancestors, { schemaPath: path, index, field: 'rule', rule }, src),
          );
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
          const m = resultType(env, msgSrc, names);
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
          else {
            messageProgram = evaluator().parse(evaluatedSource(evaluator(), msgSrc)) as unknown as Program;
            errors.push(
              ...costs.observe(
                env,
                s,
                root,
                ancestors,
                { schemaPath: path, index, field: 'messageExpression', rule },
                msgSrc,
              ),
            );
          }
        }
        // UsesOldSelf is read from the compiled rule: a rule that does not compile uses nothing
        if (rule.optionalOldSelf !== undefined && (checked.error !== undefined || !usesOldSelf))
          errors.push({
            schemaPath: path,
            index,
            field: 'optionalOldSelf',
            rule,
            value: String(rule.optionalOldSelf),
            detail: 'may not be set if oldSelf is not used in rule',
          });
        rules.push({
          rule,
          program: checked.error
            ? undefined
            : (evaluator(rule.optionalOldSelf === true).parse(
                evaluatedSource(evaluator(), src),
              ) as unknown as Program),
          ...(messageProgram ? { messageProgram } : {}),
          usesOldSelf,
          fieldPath: rule.fieldPath ? normalizeFieldPath(rule.fieldPath) : '',
        });
      });
    }
    const properties: Record<string, RuleNode> = {};
    for (const [k, p] of Object.entries(node(s.properties) ?? {})) {
      const n = node(p);
      const sub = n ? walk(n, `${path}.properties[${k}]`, false, [...ancestors, s]) : undefined;
      if (sub) properties[k] = sub;
    }
    const addlSchema = node(s.additionalProperties);
    const additionalProperties = addlSchema
      ? walk(addlSchema, `${path}.additionalProperties`, false, [...ancestors, s])
      : undefined;
    const itemsSchema = node(s.items);
    const items = itemsSchema ? walk(itemsSchema, `${path}.items`, false, [...ancestors, s]) : undefined;
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
  const tree = walk(schema, schemaPath, true, []);
  for (const e of costs.totalErrors(schemaPath)) errors.push(e);
  return { tree, errors };
}

/**
 * `%#v` of an `apiextensions.ValidationRule`, as the server prints a rule in CRD validation errors. Go prints a
 * set pointer field (`Reason`, `OptionalOldSelf`) as its address, which differs from run to run on the server;
 * envtest prints a fixed address of the same form.
 */
export function goValidationRule(r: ValidationRule): string {
  const ptr = (set: boolean, t: string, addr: string) => (set ? `(*${t})(${addr})` : `(*${t})(nil)`);
  return `apiextensions.ValidationRule{Rule:${goQuote(r.rule ?? '')}, Message:${goQuote(r.message ?? '')}, MessageExpression:${goQuote(r.messageExpression ?? '')}, Reason:${ptr(r.reason !== undefined, 'apiextensions.FieldValueErrorReason', '0xc000a1b2c0')}, FieldPath:${goQuote(r.fieldPath ?? '')}, OptionalOldSelf:${ptr(r.optionalOldSelf !== undefined, 'bool', '0xc000a1b2c8')}}`;
}
