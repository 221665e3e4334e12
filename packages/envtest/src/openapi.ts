/**
 * OpenAPI v3 (protocol §0.3): the `/openapi/v3` index and one document per group-version with the operations
 * of each kind (carrying `x-kubernetes-group-version-kind` and a `fieldValidation` parameter, what kubectl
 * checks before create/apply under `--validate=strict`) and the kinds' schemas: built-ins from the schemas
 * generated from the Kubernetes OpenAPI definitions (`schema/`), custom resources from their CRD's
 * `openAPIV3Schema` — what `kubectl explain` and kubectl's client-side apply read.
 */
import type { ServedGroups } from './discovery.js';
import { apiVersionOf, type ResourceType } from './resource-type.js';
import { model, rootModel, shapeOf } from './schema/schemas.js';

function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

/** Index entries kube-apiserver lists besides the group-versions: its non-resource discovery endpoints. */
const NON_RESOURCE_DOCS = ['.well-known/openid-configuration', 'api', 'apis', 'openid/v1/jwks', 'version'];

/** The `/openapi/v3` index: every document path, sorted as the server's (Go map keys marshal sorted). */
export function openApiIndex(served: ServedGroups, hash: (gv: string) => string): Record<string, unknown> {
  const keys = new Set(NON_RESOURCE_DOCS);
  for (const [group, versions] of served.groups) {
    if (group) keys.add(`apis/${group}`);
    for (const version of versions.keys()) keys.add(gvPath(group, version));
  }
  const paths: Record<string, unknown> = {};
  for (const p of [...keys].sort()) paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${hash(p)}` };
  return { paths };
}

/**
 * The document of a non-resource index entry (`api`, `apis`, `apis/<group>`, `version`, …): one GET operation
 * on that path and no schemas (kubectl reads only the group-version documents).
 */
function nonResourceDocument(served: ServedGroups, p: string): Record<string, unknown> | undefined {
  const group = /^apis\/([^/]+)$/.exec(p)?.[1];
  if (!NON_RESOURCE_DOCS.includes(p) && !(group && served.groups.has(group))) return undefined;
  const get = { description: `get information of ${p}`, responses: { '200': { description: 'OK' } } };
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'unversioned' },
    paths: { [`/${p}${p.startsWith('api') ? '/' : ''}`]: { get } },
    components: {},
  };
}

function schemaName(rt: ResourceType): string {
  const g = rt.group ? rt.group.split('.').reverse().join('.') : 'core';
  return `io.k8s.api.${g}.${rt.version}.${rt.kind}`;
}

/** Component name of a client model: ObjectMeta and friends live in apimachinery's meta/v1. */
function componentName(rt: ResourceType, modelName: string): string {
  const bare = modelName.replace(/^(?:[A-Z][a-z]+)?V\d+(?:(?:alpha|beta)\d+)?(?=[A-Z])/, '');
  if (META_TYPES.has(bare)) return `io.k8s.apimachinery.pkg.apis.meta.v1.${bare}`;
  const g = rt.group ? rt.group.split('.').reverse().join('.') : 'core';
  return `io.k8s.api.${g}.${rt.version}.${bare}`;
}

const META_TYPES = new Set([
  'ObjectMeta',
  'ManagedFieldsEntry',
  'OwnerReference',
  'LabelSelector',
  'LabelSelectorRequirement',
  'Condition',
  'ListMeta',
]);

/** List fields merged by key under strategic merge patch (apimachinery patchMergeKey tags), by field name. */
const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  imagePullSecrets: 'name',
  env: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  ownerReferences: 'uid',
  conditions: 'type',
  hostAliases: 'ip',
  resourceClaims: 'name',
  topologySpreadConstraints: 'topologyKey',
};

/**
 * The schemas of one built-in kind: its root (named like the server's, with the GVK) and every model it
 * reaches, into `out`.
 */
function builtinSchemas(rt: ResourceType, root: string, out: Record<string, unknown>): void {
  const pending = [root];
  const seen = new Set<string>();
  const ref = (name: string) => {
    if (!seen.has(name)) pending.push(name);
    return { $ref: `#/components/schemas/${name === root ? schemaName(rt) : componentName(rt, name)}` };
  };
  const typeSchema = (type: string, field: string, parentModel: string): Record<string, unknown> => {
    const s = shapeOf(type);
    if (s.kind === 'model') return { allOf: [ref(s.name)], default: {} };
    if (s.kind === 'array') {
      const key = MERGE_KEYS[field];
      const ports =
        field === 'ports' ? (parentModel.endsWith('ServiceSpec') ? 'port' : 'containerPort') : undefined;
      const mergeKey = key ?? ports;
      return {
        type: 'array',
        items: typeSchema(s.of, '', parentModel),
        ...(mergeKey
          ? { 'x-kubernetes-patch-merge-key': mergeKey, 'x-kubernetes-patch-strategy': 'merge' }
          : {}),
        ...(field === 'finalizers' ? { 'x-kubernetes-patch-strategy': 'merge' } : {}),
      };
    }
    if (s.kind === 'map') return { type: 'object', additionalProperties: typeSchema(s.of, '', parentModel) };
    switch (s.type) {
      case 'string':
        return { type: 'string' };
      case 'number':
        return { type: 'integer', format: 'int64' };
      case 'boolean':
        return { type: 'boolean' };
      case 'Date':
        return { type: 'string', format: 'date-time' };
      case 'IntOrString':
        return { 'x-kubernetes-int-or-string': true };
      default:
        return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    }
  };
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const m = model(name);
    if (!m) continue;
    const properties: Record<string, unknown> = {};
    const required: string[] = [];
    for (const [field, [type, req, description]] of Object.entries(m.f)) {
      properties[field] = { ...typeSchema(type, field, name), ...(description ? { description } : {}) };
      if (req) required.push(field);
    }
    out[name === root ? schemaName(rt) : componentName(rt, name)] = {
      type: 'object',
      description: m.d,
      properties,
      ...(required.length ? { required } : {}),
      ...(name === root
        ? { 'x-kubernetes-group-version-kind': [{ group: rt.group, version: rt.version, kind: rt.kind }] }
        : {}),
    };
  }
}

/** The OpenAPI v3 document of one group-version path (`api/v1`, `apis/apps/v1`), or undefined. */
export function openApiDocument(served: ServedGroups, gv: string): Record<string, unknown> | undefined {
  const m = /^(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(gv);
  if (!m) return nonResourceDocument(served, gv);
  const group = m[2] ?? '';
  const version = m[1] ?? m[3]!;
  const types = served.groups.get(group)?.get(version);
  if (!types) return undefined;
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  const prefix = group ? `/apis/${group}/${version}` : `/api/${version}`;
  const params = [
    { name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } },
    { name: 'fieldManager', in: 'query', schema: { type: 'string', uniqueItems: true } },
    { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } },
    { name: 'force', in: 'query', schema: { type: 'boolean', uniqueItems: true } },
  ];
  for (const rt of types) {
    const gvk = [{ group: rt.group, version: rt.version, kind: rt.kind }];
    const ref = { $ref: `#/components/schemas/${schemaName(rt)}` };
    const collection = rt.namespaced
      ? `${prefix}/namespaces/{namespace}/${rt.resource}`
      : `${prefix}/${rt.resource}`;
    const op = (verb: string, action: string) => ({
      tags: [rt.group || 'core'],
      operationId: `${verb}${rt.kind}`,
      parameters: params,
      responses: { '200': { description: 'OK', content: { 'application/json': { schema: ref } } } },
      'x-kubernetes-action': action,
      'x-kubernetes-group-version-kind': gvk[0],
    });
    paths[collection] = { post: op('create', 'post'), parameters: [] };
    paths[`${collection}/{name}`] = {
      get: op('read', 'get'),
      put: op('replace', 'put'),
      patch: {
        ...op('patch', 'patch'),
        requestBody: {
          content: {
            'application/apply-patch+yaml': { schema: { type: 'object' } },
            'application/json-patch+json': { schema: { type: 'object' } },
            'application/merge-patch+json': { schema: { type: 'object' } },
            ...(rt.strategicMergeKeys
              ? { 'application/strategic-merge-patch+json': { schema: { type: 'object' } } }
              : {}),
          },
          required: true,
        },
      },
      delete: op('delete', 'delete'),
    };
    const root = rt.crdName === undefined ? rootModel(rt.group, rt.version, rt.kind) : undefined;
    if (root) builtinSchemas(rt, root, schemas);
    else if (rt.openApiSchema)
      schemas[schemaName(rt)] = {
        ...rt.openApiSchema,
        'x-kubernetes-group-version-kind': [{ group: rt.group, version: rt.version, kind: rt.kind }],
      };
    else
      schemas[schemaName(rt)] = {
        type: 'object',
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: { type: 'object' },
        },
        'x-kubernetes-preserve-unknown-fields': true,
        // No x-kubernetes-group-version-kind without a schema: kubectl's client-side apply computes its
        // strategic patch from the component carrying the GVK, and a schema without fields makes that fail.
        description: `${rt.kind} (${apiVersionOf(rt)})`,
      };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.32.4' },
    paths,
    components: { schemas },
  };
}
