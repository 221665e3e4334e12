/**
 * ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1) on writes, as kube-apiserver 1.32's
 * ValidatingAdmissionPolicy plugin runs it (apiserver `admission/plugin/policy/validating`): after schema
 * validation, every ValidatingAdmissionPolicyBinding whose policy exists and whose policy `matchConstraints`
 * and binding `matchResources` match the request (resourceRules with operations/apiGroups/apiVersions/resources/
 * scope, excludeResourceRules, namespaceSelector, objectSelector) is evaluated: `matchConditions` (all true, or
 * the binding is skipped), `variables`, then `validations` in order. The first failed validation of a binding
 * whose `validationActions` include `Deny` refuses the write with the plugin's Status: code from `reason`
 * (default Invalid → 422), message `<resource>.<group> "<name>" is forbidden: ValidatingAdmissionPolicy '<p>'
 * with binding '<b>' denied request: <message>` (the message from `messageExpression`, else `message`, else
 * `failed expression: <expression>`), one cause with that text. An expression that fails to evaluate denies
 * under `failurePolicy: Fail` (the default) and is ignored under `Ignore`. CEL variables: `object`,
 * `oldObject`, `request` (operation, kind, resource, name, namespace, dryRun), `namespaceObject`, `variables`,
 * `params` (always null: `paramKind`/`paramRef` are not supported; a binding with a paramRef is skipped).
 * Not supported: `auditAnnotations`, the `Warn`/`Audit` actions (nothing is reported), `authorizer`,
 * `request.userInfo`, type-checking warnings in the policy's status, cost limits.
 */

import { type LabelSelectorSpec, selectorMatches } from './admission/selector.js';
import { dynEvaluator, toCel } from './cel/rules.js';
import { ApiStatusError, failureStatus, qualifiedResource } from './errors.js';
import type { KObject, ResourceType } from './resource-type.js';
import type { Store } from './store.js';

type Json = Record<string, unknown>;
type Program = (ctx: Record<string, unknown>) => unknown;

const POLICIES = 'admissionregistration.k8s.io/validatingadmissionpolicies';
const BINDINGS = 'admissionregistration.k8s.io/validatingadmissionpolicybindings';
const VARS = ['object', 'oldObject', 'request', 'params', 'namespaceObject', 'variables', 'authorizer'];

function obj(v: unknown): Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
}

function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

const programs = new Map<string, Program | Error>();

function program(src: string): Program | Error {
  let p = programs.get(src);
  if (!p) {
    try {
      p = dynEvaluator(VARS).parse(src) as unknown as Program;
    } catch (e) {
      p = e instanceof Error ? e : new Error(String(e));
    }
    if (programs.size > 2000) programs.clear();
    programs.set(src, p);
  }
  return p;
}

interface Request {
  readonly operation: 'CREATE' | 'UPDATE' | 'DELETE';
  readonly rt: ResourceType;
  readonly namespace: string | undefined;
  readonly name: string;
  readonly object: KObject | undefined;
  readonly oldObject: KObject | undefined;
  readonly subresource: string;
}

function ruleMatches(rule: Json, r: Request): boolean {
  const has = (field: string, v: string) => {
    const l = list(rule[field]).map(String);
    return l.includes('*') || l.includes(v);
  };
  if (!has('operations', r.operation)) return false;
  if (!has('apiGroups', r.rt.group)) return false;
  if (!has('apiVersions', r.rt.version)) return false;
  const resources = list(rule.resources).map(String);
  const full = r.subresource ? `${r.rt.resource}/${r.subresource}` : r.rt.resource;
  const resOk = resources.some(
    (x) =>
      x === '*/*' ||
      x === full ||
      (x === '*' && !r.subresource) ||
      (x.endsWith('/*') && !!r.subresource && x.slice(0, -2) === r.rt.resource) ||
      (x.startsWith('*/') && !!r.subresource && x.slice(2) === r.subresource),
  );
  if (!resOk) return false;
  const scope = rule.scope ?? '*';
  if (scope === 'Namespaced' && !r.rt.namespaced) return false;
  if (scope === 'Cluster' && r.rt.namespaced) return false;
  const names = list(rule.resourceNames).map(String);
  if (names.length > 0 && !names.includes(r.name)) return false;
  return true;
}

function labelsOf(o: KObject | undefined): Record<string, string> {
  return obj(obj(o?.metadata).labels) as Record<string, string>;
}

/** matchConstraints / matchResources: rules, excludes and selectors. */
function resourcesMatch(
  m: unknown,
  r: Request,
  nsLabels: Record<string, string> | undefined,
  whenAbsent: boolean,
): boolean {
  if (m === undefined || m === null) return whenAbsent;
  const spec = obj(m);
  const rules = list(spec.resourceRules).map(obj);
  if (rules.length > 0 && !rules.some((x) => ruleMatches(x, r))) return false;
  if (rules.length === 0 && !whenAbsent) return false;
  if (
    list(spec.excludeResourceRules)
      .map(obj)
      .some((x) => ruleMatches(x, r))
  )
    return false;
  // namespaceSelector applies to namespaced objects (and to a Namespace itself, by its own labels)
  const isNamespace = r.rt.group === '' && r.rt.resource === 'namespaces';
  if (r.rt.namespaced || isNamespace) {
    const labels = isNamespace ? labelsOf(r.object ?? r.oldObject) : (nsLabels ?? {});
    if (!selectorMatches(spec.namespaceSelector as LabelSelectorSpec | undefined, labels)) return false;
  }
  if (
    !selectorMatches(spec.objectSelector as LabelSelectorSpec | undefined, labelsOf(r.object)) &&
    !selectorMatches(spec.objectSelector as LabelSelectorSpec | undefined, labelsOf(r.oldObject))
  )
    return false;
  return true;
}

function reasonToCode(reason: string): number {
  switch (reason) {
    case 'Forbidden':
      return 403;
    case 'Unauthorized':
      return 401;
    case 'RequestEntityTooLarge':
      return 413;
    default:
      return 422;
  }
}

function evalErrorText(e: unknown): string {
  const first = String((e as Error)?.message ?? e).split('\n')[0] as string;
  const m = /^No such key: (.+)$/.exec(first);
  return m ? `no such key: ${m[1]}` : first;
}

/**
 * Evaluate the ValidatingAdmissionPolicies bound in `store` for a write.
 * @throws ApiStatusError (422 Invalid by default) when a binding with the Deny action denies the request.
 */
export function admitByPolicies(store: Store, req: Request): void {
  if (store.size(BINDINGS) === 0) return;
  const bindings = store.snapshot(BINDINGS);
  const ns = req.namespace ? store.get('/namespaces', req.namespace)?.obj : undefined;
  const nsLabels = ns ? labelsOf(ns) : undefined;
  const request = {
    operation: req.operation,
    kind: { group: req.rt.group, version: req.rt.version, kind: req.rt.kind },
    resource: { group: req.rt.group, version: req.rt.version, resource: req.rt.resource },
    ...(req.subresource ? { subResource: req.subresource } : {}),
    name: req.name,
    ...(req.namespace ? { namespace: req.namespace } : {}),
    userInfo: {},
    dryRun: false,
  };
  for (const key of bindings.keys) {
    const binding = bindings.get(key)?.obj as Json | undefined;
    if (!binding) continue;
    const bspec = obj(binding.spec);
    const actions = list(bspec.validationActions).map(String);
    if (bspec.paramRef !== undefined) continue;
    const policy = store.get(POLICIES, String(bspec.policyName ?? ''))?.obj as Json | undefined;
    if (!policy) continue;
    const pspec = obj(policy.spec);
    if (pspec.paramKind !== undefined) continue;
    if (!resourcesMatch(pspec.matchConstraints, req, nsLabels, false)) continue;
    if (!resourcesMatch(bspec.matchResources, req, nsLabels, true)) continue;
    const failClosed = pspec.failurePolicy !== 'Ignore';
    const ctx: Record<string, unknown> = {
      object: req.object ? toCel(req.object, undefined) : null,
      oldObject: req.oldObject ? toCel(req.oldObject, undefined) : null,
      request: toCel(request, undefined),
      params: null,
      namespaceObject: ns ? toCel(ns, undefined) : null,
      authorizer: null,
    };
    const deny = (message: string, reason = 'Invalid'): never => {
      const policyName = String(obj(policy.metadata).name);
      const bindingName = String(obj(binding.metadata).name);
      const text = `ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}' denied request: ${message}`;
      const what = req.name
        ? `${qualifiedResource(req.rt.resource, req.rt.group)} "${req.name}" is forbidden`
        : `${qualifiedResource(req.rt.resource, req.rt.group)} is forbidden`;
      throw new ApiStatusError(
        failureStatus(reasonToCode(reason), reason, `${what}: ${text}`, {
          name: req.name || undefined,
          group: req.rt.group,
          kind: req.rt.resource,
          causes: [{ message: text }],
        }),
      );
    };
    const evaluate = (src: string): { value?: unknown; error?: string } => {
      const p = program(src);
      if (p instanceof Error) return { error: `compilation failed: ${p.message.split('\n')[0]}` };
      try {
        return { value: p(ctx) };
      } catch (e) {
        return { error: `expression '${src}' resulted in error: ${evalErrorText(e)}` };
      }
    };
    // variables, in order, each seeing the ones before it
    const variables: Record<string, unknown> = {};
    ctx.variables = variables;
    for (const v of list(pspec.variables).map(obj)) {
      const r = evaluate(String(v.expression ?? ''));
      variables[String(v.name)] = r.error ? null : r.value;
    }
    // matchConditions: any false skips the binding; an error denies under Fail
    let skip = false;
    for (const c of list(pspec.matchConditions).map(obj)) {
      const r = evaluate(String(c.expression ?? ''));
      if (r.error) {
        if (failClosed && actions.includes('Deny'))
          deny(`failed to evaluate match condition ${String(c.name)}: ${r.error}`);
        skip = true;
        break;
      }
      if (r.value !== true) {
        skip = true;
        break;
      }
    }
    if (skip || !actions.includes('Deny')) continue;
    for (const v of list(pspec.validations).map(obj)) {
      const expression = String(v.expression ?? '').trim();
      const r = evaluate(expression);
      if (r.error) {
        if (failClosed) deny(r.error);
        continue;
      }
      if (r.value === true) continue;
      let message = '';
      if (typeof v.messageExpression === 'string' && v.messageExpression.trim()) {
        const m = evaluate(v.messageExpression);
        if (!m.error && typeof m.value === 'string') {
          message = m.value.trim();
          if (message.length > 5 * 1024 || message.includes('\n')) message = '';
        }
      }
      if (!message && typeof v.message === 'string' && v.message.length > 0) message = v.message.trim();
      if (!message) message = `failed expression: ${expression}`;
      deny(message, typeof v.reason === 'string' && v.reason ? v.reason : 'Invalid');
    }
  }
}

export type { Request as PolicyRequest };
