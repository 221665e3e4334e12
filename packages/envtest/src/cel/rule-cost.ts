/**
 * Estimated cost limits of CRD rules, as kube-apiserver 1.32 checks them when a CRD is created or updated
 * (apiextensions `validation`: a rule's estimated cost times how many times it can run must stay within
 * 10,000,000, a messageExpression's within the same, and all of a schema's within 100,000,000). The estimate is
 * `@kubeloop/core/cel`'s `estimateCelCost`; a rule it cannot estimate is accepted, and then the schema's total is
 * not checked either (it would be a lower bound, with another factor than the server's).
 */
import {
  CEL_CRD_COST_LIMIT,
  CEL_RULE_COST_LIMIT,
  type CelAstNode,
  type CelSchemaNode,
  celCostMessage,
  celSizeType,
  estimateCelCost,
  ruleCardinality,
} from '@kubeloop/core/cel';
import type { Environment } from '@marcbachmann/cel-js';
import type { SchemaNode } from '../schema/json-value.js';
import type { RuleCompileError, ValidationRule } from './rule-types.js';

const MOST_EXPENSIVE = 4;

export class RuleCosts {
  private total = 0n;
  private known = true;
  private readonly expensive: { field: string; cost: bigint; error: RuleCompileError }[] = [];

  /**
   * The cost errors of one compiled rule (or messageExpression) `src` of the schema node `s` (below `ancestors`,
   * root first), and its cost added to the schema's total.
   */
  observe(
    env: Environment,
    s: SchemaNode,
    root: boolean,
    ancestors: readonly SchemaNode[],
    at: { schemaPath: string; index: number; field: 'rule' | 'messageExpression'; rule: ValidationRule },
    src: string,
  ): RuleCompileError[] {
    const type = celSizeType(s as CelSchemaNode, root || s['x-kubernetes-embedded-resource'] === true);
    let ast: CelAstNode;
    try {
      ast = (env.parse(src) as unknown as { ast: CelAstNode }).ast;
    } catch {
      this.known = false;
      return [];
    }
    const est = type ? estimateCelCost(ast, type) : undefined;
    if (!type || !est) {
      this.known = false;
      return [];
    }
    // a rule runs once per value of its node; a messageExpression's cost is its own (as the server counts it)
    const cardinality =
      at.field === 'rule' ? ruleCardinality(ancestors as CelSchemaNode[], type.minSize) : 1n;
    const cost = est.max === 0n ? 0n : est.max * cardinality;
    this.total += cost;
    const error: RuleCompileError = {
      ...at,
      forbidden: true,
      detail: 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema',
    };
    if (cost >= CEL_CRD_COST_LIMIT / 100n) {
      this.expensive.push({ field: at.field, cost, error });
      this.expensive.sort((a, b) => (b.cost > a.cost ? 1 : b.cost < a.cost ? -1 : 0));
      this.expensive.splice(MOST_EXPENSIVE);
    }
    if (cost <= CEL_RULE_COST_LIMIT) return [];
    const what = at.field === 'rule' ? 'estimated rule cost' : 'estimated messageExpression cost';
    return [{ ...at, forbidden: true, detail: celCostMessage(what, cost, CEL_RULE_COST_LIMIT) }];
  }

  /** The errors of a schema whose rules together cost more than the limit, after all of its own. */
  totalErrors(schemaPath: string): RuleCompileError[] {
    if (!this.known || this.total <= CEL_CRD_COST_LIMIT) return [];
    return [
      ...this.expensive.map((e) => e.error),
      {
        schemaPath,
        index: -1,
        field: 'rule',
        rule: {},
        forbidden: true,
        detail: celCostMessage(
          'x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema',
          this.total,
          CEL_CRD_COST_LIMIT,
        ),
      },
    ];
  }
}
