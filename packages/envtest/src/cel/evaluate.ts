/**
 * Running compiled CRD validation rules on an object, as apiextensions-apiserver's CEL validator does: values
 * converted by the schema (`UnstructuredToVal`), rules per node in order, transition rules only with an old
 * value correlated by property, map key or list-map key, unchanged values ratcheted, errors by `reason`.
 */
import { CEL_RESERVED_WORDS, escapeCelName } from '@kubeloop/core/cel';
import { goQuote } from '@kubeloop/core/go-format';
import { Optional } from '@marcbachmann/cel-js';
import type { FieldError } from '../errors.js';
import { isObject, jsonEqual, node, type SchemaNode } from '../schema/json-value.js';
import type { RuleNode, ValidationRule } from './rule-types.js';

/**
 * UnstructuredToVal: JSON → CEL values by the schema (integers as int, numbers as double; an object with
 * properties keyed by its fields' CEL names).
 */
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
    const declared = node(s?.properties);
    const props = declared ?? {};
    const addl = node(s?.additionalProperties);
    // an object with properties is a CEL object: its fields go by their escaped names (`x-y` is `x__dash__y`);
    // the keys of a map (additionalProperties) stay as they are
    const fieldName = declared || s?.['x-kubernetes-embedded-resource'] === true;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const value = toCel(x, node(props[k]) ?? addl);
      out[(fieldName && escapeCelName(k)) || k] = value;
      // a reserved word is also found as itself (`self.namespace`), as kube-apiserver 1.32 finds it
      if (fieldName && CEL_RESERVED_WORDS.has(k)) out[k] = value;
    }
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
