/**
 * Building blocks of the hand-written built-in kinds: name and label-map validation, scheme defaults of pod
 * specs and containers, container validation, table columns, strategic-merge keys, and `base()` (a
 * ResourceType with the built-in defaults).
 */
import { type FieldError, fieldInvalid, fieldRequired } from '../errors.js';
import { validateLabelValue, validateQualifiedName } from '../label-selector.js';
import { getPath, type KObject, type ResourceType, type TableColumn } from '../resource-type.js';
import { ageString } from '../table.js';

export const ALL_VERBS = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
] as const;
export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Message of an invalid DNS-1123 subdomain (apimachinery validation). */
export const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
export const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

export const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
export const DNS1035_LABEL_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/**
 * The name rules of apimachinery: DNS-1123 subdomain (≤253), DNS-1123 label (≤63), DNS-1035 label (≤63), and
 * `path` (path.IsValidPathSegmentName, the RBAC kinds' rule: anything but `.`, `..`, `/` and `%`).
 */
export type NameRule = 'subdomain' | 'label' | 'dns1035' | 'path';

/**
 * Every message a name breaks, as apimachinery IsDNS1123Subdomain / IsDNS1123Label / IsDNS1035Label give them:
 * the length error and the regex error are both reported when both apply. `prefix` checks a generateName as
 * the name functions do with prefix=true.
 */
export function nameErrors(name: string, rule: NameRule, prefix = false): string[] {
  if (rule === 'path') {
    // a prefix (IsValidPathSegmentPrefix) may be '.' or '..': a suffix follows
    if (!prefix && (name === '.' || name === '..')) return [`may not be '${name}'`];
    return ['/', '%'].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
  }
  // a generateName prefix may end in '-' (maskTrailingDash: the last two characters become 'a')
  if (prefix && name.length > 1 && name.endsWith('-')) name = `${name.slice(0, -2)}a`;
  const [max, re, msg] =
    rule === 'subdomain'
      ? [253, DNS1123_SUBDOMAIN, DNS1123_SUBDOMAIN_MSG]
      : rule === 'label'
        ? [63, DNS1123_LABEL, DNS1123_LABEL_MSG]
        : [63, DNS1035_LABEL, DNS1035_LABEL_MSG];
  const errs: string[] = [];
  if (name.length > max) errs.push(`must be no more than ${max} characters`);
  if (!re.test(name)) errs.push(msg);
  return errs;
}

/** The first message of {@link nameErrors}, or undefined for a valid name. */
export function validateName(name: string, kind: NameRule): string | undefined {
  return nameErrors(name, kind)[0];
}

export function obj(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/**
 * A label map's errors (apimachinery `ValidateLabels`: every error names the map's path). A missing or
 * non-object map has none. Used for Service selectors and label selectors' matchLabels.
 */
export function validateLabels(m: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(obj(m))) {
    for (const msg of validateQualifiedName(k)) errs.push(fieldInvalid(path, k, msg));
    for (const msg of validateLabelValue(String(v ?? ''))) errs.push(fieldInvalid(path, v, msg));
  }
  return errs;
}

export function ensureObj(parent: Record<string, unknown>, key: string): Record<string, unknown> {
  const cur = parent[key];
  if (cur !== null && typeof cur === 'object' && !Array.isArray(cur)) return cur as Record<string, unknown>;
  const fresh: Record<string, unknown> = {};
  parent[key] = fresh;
  return fresh;
}

export function setDefault(o: Record<string, unknown>, key: string, value: unknown): void {
  if (o[key] === undefined) o[key] = value;
}

/** Defaults of a container, as the core/v1 scheme defaulter sets them. */
export function defaultContainer(c: Record<string, unknown>): void {
  setDefault(c, 'resources', {});
  setDefault(c, 'terminationMessagePath', '/dev/termination-log');
  setDefault(c, 'terminationMessagePolicy', 'File');
  if (c.imagePullPolicy === undefined) {
    const image = typeof c.image === 'string' ? c.image : '';
    const last = image.split('/').pop() ?? '';
    const tagged = last.includes(':') || image.includes('@');
    c.imagePullPolicy = !tagged || last.endsWith(':latest') ? 'Always' : 'IfNotPresent';
  }
  for (const p of Array.isArray(c.ports) ? c.ports : []) setDefault(obj(p), 'protocol', 'TCP');
}

/** Pod spec defaults (scheme defaulting: also applied to pod templates). */
export function defaultPodSpec(spec: Record<string, unknown>): void {
  for (const list of ['initContainers', 'containers']) {
    const cs = spec[list];
    if (Array.isArray(cs)) for (const c of cs) defaultContainer(obj(c));
  }
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'securityContext', {});
  setDefault(spec, 'schedulerName', 'default-scheduler');
}

export function validateContainers(spec: Record<string, unknown>, prefix: string): FieldError[] {
  const errs: FieldError[] = [];
  const cs = spec.containers;
  if (!Array.isArray(cs) || cs.length === 0) {
    errs.push(fieldRequired(`${prefix}.containers`));
    return errs;
  }
  const seen = new Set<string>();
  cs.forEach((c, i) => {
    const co = obj(c);
    const name = co.name;
    if (typeof name !== 'string' || name === '') errs.push(fieldRequired(`${prefix}.containers[${i}].name`));
    else {
      const bad = validateName(name, 'label');
      if (bad) errs.push(fieldInvalid(`${prefix}.containers[${i}].name`, name, bad));
      if (seen.has(name))
        errs.push({
          type: 'FieldValueDuplicate',
          field: `${prefix}.containers[${i}].name`,
          detail: `Duplicate value: "${name}"`,
        });
      seen.add(name);
    }
    if (typeof co.image !== 'string' || co.image === '')
      errs.push(fieldRequired(`${prefix}.containers[${i}].image`));
  });
  return errs;
}

export function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) out[k] = sortKeys((v as Record<string, unknown>)[k]);
  return out;
}

export const col = (
  name: string,
  type: string,
  description: string,
  cell: (o: KObject, now: number) => unknown,
  priority = 0,
  format = '',
): TableColumn => ({ name, type, format, description, priority, cell });

export const ageColumn = col(
  'Age',
  'string',
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
  (o, now) => ageString(getPath(o, 'metadata.creationTimestamp'), now),
);

export const str = (v: unknown, dflt = '<none>'): string =>
  v === undefined || v === null || v === '' ? dflt : String(v);

export function base(
  partial: Partial<ResourceType> &
    Pick<
      ResourceType,
      'group' | 'version' | 'resource' | 'kind' | 'singular' | 'namespaced' | 'storageVersionHash'
    >,
): ResourceType {
  return {
    listKind: `${partial.kind}List`,
    shortNames: [],
    categories: [],
    verbs: ALL_VERBS,
    statusSubresource: false,
    hasGeneration: false,
    allowUnconditionalUpdate: true,
    allowCreateOnUpdate: false,
    returnDeletedObject: false,
    fieldSelectors: {},
    fieldSelectorStyle: 'builtin',
    strategicMergeKeys: {},
    strategicSetLists: ['metadata.finalizers'],
    listItemsHaveTypeMeta: false,
    storageKey: `${partial.group}/${partial.resource}`,
    tableColumns: [ageColumn],
    ...partial,
  };
}

export const OBJECT_META_KEYS = { 'metadata.ownerReferences': 'uid', 'metadata.managedFields': '' };
export const POD_SPEC_KEYS = (p: string): Record<string, string> => ({
  [`${p}.containers`]: 'name',
  [`${p}.initContainers`]: 'name',
  [`${p}.ephemeralContainers`]: 'name',
  [`${p}.containers.env`]: 'name',
  [`${p}.initContainers.env`]: 'name',
  [`${p}.containers.ports`]: 'containerPort',
  [`${p}.initContainers.ports`]: 'containerPort',
  [`${p}.containers.volumeMounts`]: 'mountPath',
  [`${p}.initContainers.volumeMounts`]: 'mountPath',
  [`${p}.containers.volumeDevices`]: 'devicePath',
  [`${p}.volumes`]: 'name',
  [`${p}.imagePullSecrets`]: 'name',
  [`${p}.resourceClaims`]: 'name',
  [`${p}.hostAliases`]: 'ip',
  [`${p}.topologySpreadConstraints`]: 'topologyKey',
});
