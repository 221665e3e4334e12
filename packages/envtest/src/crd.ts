/**
 * CustomResourceDefinitions (protocol §10): a CRD, once created, makes its resource served and
 * discoverable, is marked NamesAccepted + Established through a status write (MODIFIED event), and on
 * deletion takes its custom resources with it.
 */
import { createHash } from 'node:crypto';
import { cachedConversion } from './admission/conversion.js';
import { compileRules, validateRules } from './cel/rules.js';
import { validateCrdConversion } from './crd-conversion-validation.js';
import { validateCrdSchemas } from './crd-schema-validation.js';
import { decodeCustomResource, schemaHasDefaults, validateCustomResource } from './crd-validation.js';
import { type FieldError, fieldInvalid, fieldRequired } from './errors.js';
import { firstJsonPathValue } from './jsonpath.js';
import type { KObject, ResourceType, ScaleSpec, TableColumn } from './resource-type.js';
import { getPath } from './resource-type.js';
import { ageString } from './table.js';

function obj(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** Defaults a CRD create fills in (names.singular, listKind, conversion, version fields). */
export function defaultCrd(o: KObject): void {
  const spec = obj(o.spec);
  const names = obj(spec.names);
  if (typeof names.kind === 'string') {
    if (names.singular === undefined) names.singular = names.kind.toLowerCase();
    if (names.listKind === undefined) names.listKind = `${names.kind}List`;
  }
  if (spec.conversion === undefined) spec.conversion = { strategy: 'None' };
}

/** Validate a CRD's shape (subset of apiextensions validation). */
export function validateCrd(o: KObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = obj(o.spec);
  const names = obj(spec.names);
  const group = spec.group;
  const name = getPath(o, 'metadata.name');
  if (typeof group !== 'string' || !group) errs.push(fieldRequired('spec.group'));
  if (typeof names.plural !== 'string' || !names.plural) errs.push(fieldRequired('spec.names.plural'));
  if (typeof names.kind !== 'string' || !names.kind) errs.push(fieldRequired('spec.names.kind'));
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster')
    errs.push({
      type: 'FieldValueNotSupported',
      field: 'spec.scope',
      detail: `Unsupported value: ${JSON.stringify(spec.scope ?? '')}: supported values: "Cluster", "Namespaced"`,
    });
  if (typeof group === 'string' && typeof names.plural === 'string' && name !== `${names.plural}.${group}`)
    errs.push(fieldInvalid('metadata.name', name, `must be spec.names.plural+"."+spec.group`));
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  if (versions.length === 0)
    errs.push(fieldRequired('spec.versions', 'must have exactly one version marked as storage version'));
  else if (versions.filter((v) => obj(v).storage === true).length !== 1)
    errs.push(
      fieldInvalid('spec.versions', versions, 'must have exactly one version marked as storage version'),
    );
  for (const e of validateCrdSchemas(o)) errs.push(e);
  for (const e of validateCrdConversion(spec)) errs.push(e);
  return errs;
}

/** The established status of a CRD. */
export function establishedStatus(o: KObject, now: string): Record<string, unknown> {
  const spec = obj(o.spec);
  const names = obj(spec.names);
  const storage = (Array.isArray(spec.versions) ? spec.versions : [])
    .map(obj)
    .find((v) => v.storage === true);
  return {
    conditions: [
      {
        type: 'NamesAccepted',
        status: 'True',
        lastTransitionTime: now,
        reason: 'NoConflicts',
        message: 'no conflicts found',
      },
      {
        type: 'Established',
        status: 'True',
        lastTransitionTime: now,
        reason: 'InitialNamesAccepted',
        message: 'the initial names have been accepted',
      },
    ],
    acceptedNames: {
      plural: names.plural,
      singular: names.singular,
      ...(names.shortNames ? { shortNames: names.shortNames } : {}),
      kind: names.kind,
      listKind: names.listKind,
      ...(names.categories ? { categories: names.categories } : {}),
    },
    storedVersions: storage ? [storage.name] : [],
  };
}

type Schema = Record<string, unknown>;

/** Walk an object against an OpenAPI v3 schema: prune unknown fields (or report them), check types. */
export function checkSchema(
  value: unknown,
  schema: Schema | undefined,
  path: string,
  unknown: string[],
  typeErrors: FieldError[],
  prune: boolean,
): unknown {
  if (!schema) return value;
  if (schema['x-kubernetes-preserve-unknown-fields'] === true && !schema.properties) return value;
  if (schema['x-kubernetes-int-or-string'] === true) return value;
  const type = schema.type;
  if (value === null || value === undefined) return value;
  if (type === 'object' || schema.properties || schema.additionalProperties) {
    if (typeof value !== 'object' || Array.isArray(value)) {
      typeErrors.push({
        type: 'FieldValueTypeInvalid',
        field: path.slice(1),
        detail: `Invalid value: "${Array.isArray(value) ? 'array' : typeof value}": ${path.slice(1)} in body must be of type object: "${Array.isArray(value) ? 'array' : typeof value}"`,
      });
      return value;
    }
    const props = obj(schema.properties);
    const addl = schema.additionalProperties;
    const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const sub = `${path}.${k}`;
      if (props[k]) out[k] = checkSchema(v, obj(props[k]), sub, unknown, typeErrors, prune);
      else if (addl && typeof addl === 'object')
        out[k] = checkSchema(v, obj(addl), sub, unknown, typeErrors, prune);
      else if (addl === true || preserve) out[k] = v;
      else {
        unknown.push(sub);
        if (!prune) out[k] = v;
      }
    }
    for (const [k, p] of Object.entries(props)) {
      const d = obj(p).default;
      if (out[k] === undefined && d !== undefined) out[k] = structuredClone(d);
    }
    const req = Array.isArray(schema.required) ? (schema.required as string[]) : [];
    for (const r of req)
      if (out[r] === undefined) typeErrors.push(fieldRequired(`${path.slice(1)}.${r}`.replace(/^\./, '')));
    return out;
  }
  if (type === 'array') {
    if (!Array.isArray(value)) {
      typeErrors.push({
        type: 'FieldValueTypeInvalid',
        field: path.slice(1),
        detail: `Invalid value: "${typeof value}": ${path.slice(1)} in body must be of type array: "${typeof value}"`,
      });
      return value;
    }
    return value.map((v, i) =>
      checkSchema(v, obj(schema.items), `${path}[${i}]`, unknown, typeErrors, prune),
    );
  }
  const jsType = typeof value;
  const ok =
    (type === 'string' && jsType === 'string') ||
    (type === 'integer' && jsType === 'number' && Number.isInteger(value)) ||
    (type === 'number' && jsType === 'number') ||
    (type === 'boolean' && jsType === 'boolean') ||
    type === undefined;
  if (!ok)
    typeErrors.push({
      type: 'FieldValueTypeInvalid',
      field: path.slice(1),
      detail: `Invalid value: ${JSON.stringify(value)}: ${path.slice(1)} in body must be of type ${String(type)}: "${jsType}"`,
    });
  if (Array.isArray(schema.enum) && !schema.enum.includes(value))
    typeErrors.push({
      type: 'FieldValueNotSupported',
      field: path.slice(1),
      detail: `Unsupported value: ${JSON.stringify(value)}: supported values: ${(schema.enum as unknown[]).map((e) => JSON.stringify(e)).join(', ')}`,
    });
  return value;
}

function jsonPathGetter(jsonPath: string): (o: KObject) => unknown {
  const p = jsonPath.replace(/^\{?\.?/, '').replace(/\}$/, '');
  return (o) => getPath(o, p);
}

function printerColumns(version: Record<string, unknown>): TableColumn[] {
  const cols = Array.isArray(version.additionalPrinterColumns)
    ? version.additionalPrinterColumns.map(obj)
    : [];
  const out: TableColumn[] = cols.map((c) => {
    // client-go jsonpath as the table convertor runs it: filters, indexes, [*]; the first result is the cell
    const get = firstJsonPathValue(String(c.jsonPath ?? ''));
    const type = String(c.type ?? 'string');
    return {
      name: String(c.name ?? ''),
      type,
      format: String(c.format ?? ''),
      // apiextensions' table convertor: an undocumented column is described by its JSONPath
      description: c.description
        ? String(c.description)
        : `Custom resource definition column (in JSONPath format): ${String(c.jsonPath ?? '')}`,
      priority: Number(c.priority ?? 0),
      cell: (o: KObject, now: number) => {
        const v = get(o);
        if (v === undefined || v === null) return null;
        if (type === 'date') return ageString(v, now);
        if (type === 'integer' || type === 'number' || type === 'boolean') return v;
        return typeof v === 'object' ? JSON.stringify(v) : String(v);
      },
    };
  });
  if (cols.length === 0)
    out.push({
      name: 'Age',
      type: 'date',
      format: '',
      description:
        'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
      priority: 0,
      cell: (o, now) => ageString(getPath(o, 'metadata.creationTimestamp'), now),
    });
  return out;
}

/** The resource types a CRD serves (one per served version). */
export function crdResourceTypes(crd: KObject): ResourceType[] {
  const spec = obj(crd.spec);
  const names = obj(spec.names);
  const group = String(spec.group);
  const plural = String(names.plural);
  const kind = String(names.kind);
  const crdName = String(getPath(crd, 'metadata.name'));
  const versions = (Array.isArray(spec.versions) ? spec.versions : []).map(obj);
  const hash = createHash('sha256').update(`${group}/${plural}`).digest().subarray(0, 8).toString('base64');
  const storageName = String(versions.find((v) => v.storage === true)?.name ?? '');
  const sorted = [...versions].sort((a, b) => (a.storage === true ? -1 : b.storage === true ? 1 : 0));
  const conv = obj(spec.conversion);
  const conversion =
    conv.strategy === 'Webhook'
      ? {
          crdUid: String(getPath(crd, 'metadata.uid') ?? crdName),
          kind,
          group,
          storageVersion: storageName,
          servedVersions: versions.filter((v) => v.served !== false).map((v) => String(v.name)),
          webhook: obj(conv.webhook),
        }
      : undefined;
  return sorted
    .filter((v) => v.served !== false)
    .map((v) => {
      const sub = obj(v.subresources);
      const scaleSpec = sub.scale ? obj(sub.scale) : undefined;
      const schema = obj(obj(v.schema).openAPIV3Schema);
      const selectable = Array.isArray(v.selectableFields) ? v.selectableFields.map(obj) : [];
      const fieldSelectors: Record<string, (o: KObject) => string> = {};
      for (const f of selectable) {
        const jp = String(f.jsonPath ?? '').replace(/^\./, '');
        const get = jsonPathGetter(jp);
        fieldSelectors[jp] = (o) => {
          const x = get(o);
          return x === undefined || x === null ? '' : String(x);
        };
      }
      const scale: ScaleSpec | undefined = scaleSpec
        ? {
            specReplicasPath: String(scaleSpec.specReplicasPath ?? '.spec.replicas'),
            statusReplicasPath: String(scaleSpec.statusReplicasPath ?? '.status.replicas'),
            ...(scaleSpec.labelSelectorPath
              ? { labelSelectorPath: String(scaleSpec.labelSelectorPath) }
              : {}),
          }
        : undefined;
      const hasSchema = Object.keys(schema).length > 0;
      const listTypes = applyListTypes(schema);
      // rules that do not compile never reach here: the CRD is refused at creation (validateCrd)
      const rules = hasSchema ? compileRules(schema).tree : undefined;
      const readDefaults =
        hasSchema && schemaHasDefaults(schema)
          ? (o: KObject): KObject => {
              decodeCustomResource(o, schema);
              return o;
            }
          : undefined;
      const rt: ResourceType = {
        group,
        version: String(v.name),
        resource: plural,
        kind,
        listKind: String(names.listKind ?? `${kind}List`),
        singular: String(names.singular ?? kind.toLowerCase()),
        namespaced: spec.scope !== 'Cluster',
        shortNames: Array.isArray(names.shortNames) ? names.shortNames.map(String) : [],
        categories: Array.isArray(names.categories) ? names.categories.map(String) : [],
        verbs: ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'],
        statusSubresource: sub.status !== undefined,
        ...(scale ? { scale } : {}),
        hasGeneration: true,
        allowUnconditionalUpdate: false,
        allowCreateOnUpdate: false,
        returnDeletedObject: false,
        fieldSelectors,
        fieldSelectorStyle: 'builtin',
        strategicMergeKeys: undefined,
        strategicSetLists: ['metadata.finalizers'],
        applyListKeys: listTypes.keys,
        applySetLists: listTypes.sets,
        listItemsHaveTypeMeta: true,
        storageKey: `${group}/${plural}`,
        storageVersionHash: hash,
        crdName,
        ...(hasSchema ? { openApiSchema: schema } : {}),
        // conversion strategy None: other served versions see the stored object with only apiVersion changed;
        // every version reads the stored object through pruning and defaulting when its schema has defaults
        ...(v.storage === true
          ? readDefaults
            ? { fromStorage: (o: KObject): KObject => readDefaults(structuredClone(o)) }
            : {}
          : {
              fromStorage: (o: KObject): KObject => {
                // strategy Webhook: the conversion made before the write (admission/conversion.ts)
                const out = (conversion &&
                  cachedConversion(conversion.crdUid, o, `${group}/${String(v.name)}`)) ?? {
                  ...o,
                  apiVersion: `${group}/${String(v.name)}`,
                };
                return readDefaults ? readDefaults(structuredClone(out)) : out;
              },
              toStorage: (o: KObject): KObject =>
                (conversion && cachedConversion(conversion.crdUid, o, `${group}/${storageName}`)) ?? {
                  ...o,
                  apiVersion: `${group}/${storageName}`,
                },
            }),
        ...(conversion ? { conversion } : {}),
        tableColumns: printerColumns(v),
        unknownFields: hasSchema
          ? (o) => {
              const unknown: string[] = [];
              const { metadata: _m, kind: _k, apiVersion: _a, ...rest } = o;
              checkSchema(
                rest,
                { ...schema, properties: { ...obj(schema.properties) } },
                '',
                unknown,
                [],
                false,
              );
              return unknown;
            }
          : undefined,
        defaults: hasSchema
          ? (o) => {
              decodeCustomResource(o, schema);
            }
          : undefined,
        validate: hasSchema
          ? (o, old) =>
              validateCustomResource(
                schema,
                o,
                old,
                rules ? (obj, prev) => validateRules(rules, obj, prev) : undefined,
              )
          : undefined,
      };
      return rt;
    });
}

/**
 * The lists of a CRD schema that server-side apply merges per element, by dotted path (array items add no
 * segment, as the field-set walk names them): `x-kubernetes-list-type: map` with one
 * `x-kubernetes-list-map-keys` key → merged by that key; `set` → merged by value (structured-merge-diff reads
 * the same extensions from the CRD's schema). Maps keyed by several fields, and `atomic` or untyped lists,
 * stay one field (an approximation for the multi-key case).
 */
function applyListTypes(schema: Record<string, unknown>): { keys: Record<string, string>; sets: string[] } {
  const keys: Record<string, string> = {};
  const sets: string[] = [];
  const walk = (node: unknown, dotted: string, depth: number): void => {
    if (depth > 64 || node === null || typeof node !== 'object') return;
    const n = node as Record<string, unknown>;
    if (n.type === 'array' || n.items !== undefined) {
      const mapKeys = n['x-kubernetes-list-map-keys'];
      if (n['x-kubernetes-list-type'] === 'map' && Array.isArray(mapKeys) && mapKeys.length === 1)
        keys[dotted] = String(mapKeys[0]);
      else if (n['x-kubernetes-list-type'] === 'set') sets.push(dotted);
      walk(n.items, dotted, depth + 1);
    }
    const props = n.properties;
    if (props && typeof props === 'object')
      for (const [k, v] of Object.entries(props as Record<string, unknown>))
        walk(v, dotted ? `${dotted}.${k}` : k, depth + 1);
  };
  walk(schema, '', 0);
  return { keys, sets };
}
