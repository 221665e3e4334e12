/**
 * A schema that kube-apiserver cannot express as a structural CRD schema (or a definition it would refuse), found
 * while generating. `path` names the property (`spec.ports[*].protocol`), `message` says what and why.
 */
export class SchemaError extends Error {
  override readonly name: string = 'SchemaError';
  /** The property path inside the object, e.g. `spec.template.ports[*]`; `''` for the definition itself. */
  readonly path: string;
  constructor(path: string, detail: string) {
    super(path ? `${path}: ${detail}` : detail);
    this.path = path;
  }
}

/**
 * A CEL rule of `x-kubernetes-validations` that does not compile, with the rule, the property path it sits on and
 * the evaluator's message, as kube-apiserver refuses such a CRD (`compilation failed: …`).
 */
export class CelCompileError extends SchemaError {
  override readonly name: string = 'CelCompileError';
  /** The rule (or messageExpression) text. */
  readonly rule: string;
  /** The evaluator's own message. */
  readonly detail: string;
  constructor(path: string, rule: string, detail: string) {
    super(path, `x-kubernetes-validations rule ${JSON.stringify(rule)} does not compile: ${detail}`);
    this.rule = rule;
    this.detail = detail;
  }
}
