/** The shapes of compiled CRD validation rules, shared by their compiler and their evaluator. */
import type { SchemaNode } from '../schema/json-value.js';

/** One `x-kubernetes-validations` entry. */
export interface ValidationRule {
  readonly rule?: string;
  readonly message?: string;
  readonly messageExpression?: string;
  readonly reason?: string;
  readonly fieldPath?: string;
  readonly optionalOldSelf?: boolean;
}

/** A compiled CEL program: evaluates against the variables (`self`, `oldSelf`, …) it is given. */
export type Program = (ctx: Record<string, unknown>) => unknown;

/** One rule with its programs: where it reports (`fieldPath`) and whether it reads `oldSelf` (a transition rule). */
export interface CompiledRule {
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
  readonly field: 'rule' | 'messageExpression' | 'optionalOldSelf';
  readonly rule: ValidationRule;
  /** A Forbidden error (the estimated cost limits) rather than an Invalid value; `index` -1: the schema itself. */
  readonly forbidden?: true;
  /** The bad value as the server prints it, when it is not the rule (`%#v` of the ValidationRule). */
  readonly value?: string;
  readonly detail: string;
}
