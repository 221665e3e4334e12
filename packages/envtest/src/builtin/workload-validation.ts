/**
 * Validation of the workload kinds as kube-apiserver 1.32 does it (pkg/apis/apps/validation and
 * pkg/apis/batch/validation, with the apps/v1 strategies' update rules): label selectors, the selector matching
 * the pod template's labels, non-negative counts, the pod template's restartPolicy, the Deployment strategy,
 * and selectors that may not change. Errors come in upstream order with upstream field paths; values are
 * rendered as Go's `%#v` renders the internal types (`map[string]string{"app":"a"}`,
 * `v1.LabelSelector{MatchLabels:…, MatchExpressions:…}`).
 */
import {
  type FieldError,
  fieldForbidden,
  fieldInvalid,
  fieldNotSupported,
  fieldRequired,
} from '../errors.js';
import { validateLabelValue, validateQualifiedName } from '../label-selector.js';
import type { KObject } from '../resource-type.js';
import { obj, validateContainers, validateLabels } from './common.js';

const NEGATIVE = 'must be greater than or equal to 0';
const NO_MATCH = '`selector` does not match template `labels`';
const IMMUTABLE = 'field is immutable';

const goStr = (s: unknown) => JSON.stringify(String(s));
const isObj = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Go's `%#v` of a `map[string]string` (keys sorted, as fmt prints maps; nil when absent). */
export function goStringMap(m: unknown): string {
  if (!isObj(m)) return 'map[string]string(nil)';
  const parts = Object.keys(m)
    .sort()
    .map((k) => `${goStr(k)}:${goStr(m[k])}`);
  return `map[string]string{${parts.join(', ')}}`;
}

function goStringSlice(v: unknown): string {
  return Array.isArray(v) ? `[]string{${v.map(goStr).join(', ')}}` : '[]string(nil)';
}

/** Go's `%#v` of a `metav1.LabelSelector` (what field.Invalid prints for a `*LabelSelector`). */
export function goLabelSelector(sel: unknown): string {
  if (!isObj(sel)) return 'null';
  const exprs = Array.isArray(sel.matchExpressions)
    ? `[]v1.LabelSelectorRequirement{${sel.matchExpressions
        .map((e) => {
          const r = obj(e);
          return `v1.LabelSelectorRequirement{Key:${goStr(r.key ?? '')}, Operator:${goStr(r.operator ?? '')}, Values:${goStringSlice(r.values)}}`;
        })
        .join(', ')}}`
    : '[]v1.LabelSelectorRequirement(nil)';
  return `v1.LabelSelector{MatchLabels:${goStringMap(sel.matchLabels)}, MatchExpressions:${exprs}}`;
}

/** apimachinery `ValidateLabelSelector` (label values checked strictly). */
export function validateLabelSelector(sel: unknown, path: string): FieldError[] {
  if (!isObj(sel)) return [];
  const errs = validateLabels(sel.matchLabels, `${path}.matchLabels`);
  const exprs = Array.isArray(sel.matchExpressions) ? sel.matchExpressions : [];
  exprs.forEach((e, i) => {
    const r = obj(e);
    const p = `${path}.matchExpressions[${i}]`;
    const values = Array.isArray(r.values) ? r.values : [];
    switch (r.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0)
          errs.push(fieldRequired(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0)
          errs.push(
            fieldForbidden(
              `${p}.values`,
              "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            ),
          );
        break;
      default:
        errs.push(fieldInvalid(`${p}.operator`, r.operator ?? '', 'not a valid selector operator'));
    }
    for (const msg of validateQualifiedName(String(r.key ?? '')))
      errs.push(fieldInvalid(`${p}.key`, r.key, msg));
    values.forEach((v, j) => {
      for (const msg of validateLabelValue(String(v))) errs.push(fieldInvalid(`${p}.values[${j}]`, v, msg));
    });
  });
  return errs;
}

/**
 * Does a (valid) label selector match `labels`? An absent selector matches nothing (metav1
 * `LabelSelectorAsSelector(nil)` is `labels.Nothing()`); an empty one matches everything.
 */
export function selectorMatches(sel: unknown, labels: unknown): boolean {
  if (!isObj(sel)) return false;
  const l = obj(labels);
  for (const [k, v] of Object.entries(obj(sel.matchLabels))) if (l[k] !== v) return false;
  for (const e of Array.isArray(sel.matchExpressions) ? sel.matchExpressions : []) {
    const r = obj(e);
    const key = String(r.key ?? '');
    const has = Object.hasOwn(l, key);
    const values = (Array.isArray(r.values) ? r.values : []).map(String);
    const ok =
      r.operator === 'In'
        ? has && values.includes(String(l[key]))
        : r.operator === 'NotIn'
          ? !has || !values.includes(String(l[key]))
          : r.operator === 'Exists'
            ? has
            : !has;
    if (!ok) return false;
  }
  return true;
}

const selectorEmpty = (sel: Record<string, unknown>) =>
  Object.keys(obj(sel.matchLabels)).length +
    (Array.isArray(sel.matchExpressions) ? sel.matchExpressions.length : 0) ===
  0;

/** field.Invalid with a value already rendered as Go prints it (`goValue`), and an optional detail. */
function goInvalid(field: string, goValue: string, detail: string): FieldError {
  return {
    type: 'FieldValueInvalid',
    field,
    detail: detail ? `Invalid value: ${goValue}: ${detail}` : `Invalid value: ${goValue}`,
  };
}

/** The template labels are not selected by the selector (an absent selector selects nothing). */
function mismatchErrors(errs: FieldError[], sel: unknown, labels: unknown): void {
  if ((!isObj(sel) || !selectorEmpty(sel)) && !selectorMatches(sel, labels))
    errs.push(goInvalid('spec.template.metadata.labels', goStringMap(labels), NO_MATCH));
}

/** The pod template of a long-running workload: restartPolicy Always, no activeDeadlineSeconds. */
function podTemplateRules(errs: FieldError[], podSpec: Record<string, unknown>, kind: string): void {
  if (podSpec.restartPolicy !== 'Always')
    errs.push(fieldNotSupported('spec.template.spec.restartPolicy', podSpec.restartPolicy ?? '', ['Always']));
  if (podSpec.activeDeadlineSeconds !== undefined && podSpec.activeDeadlineSeconds !== null)
    errs.push(
      fieldForbidden(
        'spec.template.spec.activeDeadlineSeconds',
        `activeDeadlineSeconds in ${kind} is not Supported`,
      ),
    );
}

function nonNegative(errs: FieldError[], v: unknown, path: string): void {
  if (typeof v === 'number' && v < 0) errs.push(fieldInvalid(path, v, NEGATIVE));
}

/** Selector: required, valid, not empty; returns whether it converts to a selector. */
function selectorErrors(errs: FieldError[], spec: Record<string, unknown>, what: string): boolean {
  const sel = spec.selector;
  if (!isObj(sel)) {
    errs.push(fieldRequired('spec.selector'));
    return true;
  }
  const selErrs = validateLabelSelector(sel, 'spec.selector');
  for (const e of selErrs) errs.push(e);
  if (selectorEmpty(sel))
    errs.push(goInvalid('spec.selector', goLabelSelector(sel), `empty selector is invalid for ${what}`));
  return selErrs.length === 0;
}

/** apps/v1 strategies refuse a changed selector on update. */
function selectorImmutable(errs: FieldError[], o: KObject, old: KObject | undefined): void {
  if (!old) return;
  const sel = obj(o.spec).selector;
  if (JSON.stringify(canonicalSelector(sel)) !== JSON.stringify(canonicalSelector(obj(old.spec).selector)))
    errs.push(goInvalid('spec.selector', goLabelSelector(sel), IMMUTABLE));
}

function canonicalSelector(sel: unknown): unknown {
  if (!isObj(sel)) return null;
  const ml = obj(sel.matchLabels);
  return {
    matchLabels: Object.fromEntries(
      Object.keys(ml)
        .sort()
        .map((k) => [k, ml[k]]),
    ),
    matchExpressions: Array.isArray(sel.matchExpressions) ? sel.matchExpressions : [],
  };
}

/**
 * The spec checks Deployment and ReplicaSet share (`ValidatePodTemplateSpecForReplicaSet` and what precedes it):
 * selector, then the template (labels matched, containers, restartPolicy, activeDeadlineSeconds).
 */
function replicaSetLikeErrors(errs: FieldError[], spec: Record<string, unknown>): void {
  const usable = selectorErrors(errs, spec, 'deployment');
  if (!usable)
    errs.push(goInvalid('spec.selector', goLabelSelector(spec.selector), 'invalid label selector'));
  const tmpl = obj(spec.template);
  if (usable) mismatchErrors(errs, spec.selector, obj(tmpl.metadata).labels);
  const podSpec = obj(tmpl.spec);
  for (const e of validateContainers(podSpec, 'spec.template.spec')) errs.push(e);
  podTemplateRules(errs, podSpec, 'ReplicaSet');
}

/** Deployment (apps/v1): `ValidateDeploymentSpec`, plus the immutable selector on update. */
export function validateDeployment(o: KObject, old: KObject | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const spec = obj(o.spec);
  nonNegative(errs, spec.replicas, 'spec.replicas');
  replicaSetLikeErrors(errs, spec);
  const strategy = obj(spec.strategy);
  if (strategy.type === 'Recreate' && strategy.rollingUpdate !== undefined && strategy.rollingUpdate !== null)
    errs.push(
      fieldForbidden(
        'spec.strategy.rollingUpdate',
        "may not be specified when strategy `type` is 'Recreate'",
      ),
    );
  nonNegative(errs, spec.minReadySeconds, 'spec.minReadySeconds');
  nonNegative(errs, spec.revisionHistoryLimit, 'spec.revisionHistoryLimit');
  const pds = spec.progressDeadlineSeconds;
  if (typeof pds === 'number') {
    nonNegative(errs, pds, 'spec.progressDeadlineSeconds');
    if (pds <= (typeof spec.minReadySeconds === 'number' ? spec.minReadySeconds : 0))
      errs.push(fieldInvalid('spec.progressDeadlineSeconds', pds, 'must be greater than minReadySeconds'));
  }
  selectorImmutable(errs, o, old);
  return errs;
}

/** ReplicaSet (apps/v1): `ValidateReplicaSetSpec`, plus the immutable selector on update. */
export function validateReplicaSet(o: KObject, old: KObject | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const spec = obj(o.spec);
  nonNegative(errs, spec.replicas, 'spec.replicas');
  nonNegative(errs, spec.minReadySeconds, 'spec.minReadySeconds');
  replicaSetLikeErrors(errs, spec);
  selectorImmutable(errs, o, old);
  return errs;
}

/** StatefulSet spec fields an update may change (apps `ValidateStatefulSetUpdate`). */
const STATEFULSET_MUTABLE = [
  'replicas',
  'ordinals',
  'template',
  'updateStrategy',
  'persistentVolumeClaimRetentionPolicy',
  'minReadySeconds',
];

/** StatefulSet (apps/v1): `ValidateStatefulSetSpec` (no pod spec checks upstream); on update only the mutable spec fields may change. */
export function validateStatefulSet(o: KObject, old: KObject | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const spec = obj(o.spec);
  nonNegative(errs, spec.replicas, 'spec.replicas');
  nonNegative(errs, spec.minReadySeconds, 'spec.minReadySeconds');
  const usable = selectorErrors(errs, spec, 'statefulset');
  if (!usable) errs.push(goInvalid('spec.selector', goLabelSelector(spec.selector), ''));
  const tmpl = obj(spec.template);
  if (usable) mismatchErrors(errs, spec.selector, obj(tmpl.metadata).labels);
  podTemplateRules(errs, obj(tmpl.spec), 'StatefulSet');
  if (old) {
    const rest = (s: unknown) =>
      JSON.stringify(
        Object.fromEntries(
          Object.entries(obj(s))
            .filter(([k]) => !STATEFULSET_MUTABLE.includes(k))
            .sort(([a], [b]) => (a < b ? -1 : 1)),
        ),
      );
    if (rest(o.spec) !== rest(old.spec))
      errs.push(
        fieldForbidden(
          'spec',
          "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ),
      );
  }
  return errs;
}

/** DaemonSet (apps/v1): `ValidateDaemonSetSpec` (no Required selector), plus the immutable selector on update. */
export function validateDaemonSet(o: KObject, old: KObject | undefined): FieldError[] {
  const spec = obj(o.spec);
  const errs = validateLabelSelector(spec.selector, 'spec.selector');
  const tmpl = obj(spec.template);
  if (errs.length === 0) mismatchErrors(errs, spec.selector, obj(tmpl.metadata).labels);
  if (isObj(spec.selector) && selectorEmpty(spec.selector))
    errs.push(
      goInvalid('spec.selector', goLabelSelector(spec.selector), 'empty selector is invalid for daemonset'),
    );
  const podSpec = obj(tmpl.spec);
  for (const e of validateContainers(podSpec, 'spec.template.spec')) errs.push(e);
  podTemplateRules(errs, podSpec, 'DaemonSet');
  nonNegative(errs, spec.minReadySeconds, 'spec.minReadySeconds');
  nonNegative(errs, spec.revisionHistoryLimit, 'spec.revisionHistoryLimit');
  selectorImmutable(errs, o, old);
  return errs;
}

/** The restartPolicy of a Job's pod template (batch `validateJobSpec`): OnFailure or Never. */
export function jobTemplateErrors(podSpec: unknown, path: string): FieldError[] {
  const rp = obj(podSpec).restartPolicy;
  return rp === 'OnFailure' || rp === 'Never'
    ? []
    : [fieldNotSupported(`${path}.restartPolicy`, rp ?? '', ['OnFailure', 'Never'])];
}

/** Job (batch/v1): the pod template's restartPolicy and non-negative counts. */
export function validateJob(o: KObject): FieldError[] {
  const spec = obj(o.spec);
  const errs: FieldError[] = [];
  nonNegative(errs, spec.parallelism, 'spec.parallelism');
  nonNegative(errs, spec.completions, 'spec.completions');
  nonNegative(errs, spec.backoffLimit, 'spec.backoffLimit');
  for (const e of jobTemplateErrors(obj(spec.template).spec, 'spec.template.spec')) errs.push(e);
  return errs;
}

/** CronJob (batch/v1): its job template's pod restartPolicy. */
export function validateCronJob(o: KObject): FieldError[] {
  const tmpl = obj(obj(obj(obj(o.spec).jobTemplate).spec).template);
  return jobTemplateErrors(tmpl.spec, 'spec.jobTemplate.spec.template.spec');
}
