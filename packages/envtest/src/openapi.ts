/**
 * A minimal OpenAPI v3 surface (protocol §0.3): the `/openapi/v3` index and one document per group-version
 * with a PATCH operation per kind carrying `x-kubernetes-group-version-kind` and a `fieldValidation`
 * parameter — what kubectl checks before create/apply under `--validate=strict`.
 */
import type { ServedGroups } from './discovery.js';
import { apiVersionOf, type ResourceType } from './resource-type.js';

function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

export function openApiIndex(served: ServedGroups, hash: (gv: string) => string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const [group, versions] of served.groups)
    for (const version of versions.keys()) {
      const p = gvPath(group, version);
      paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${hash(p)}` };
    }
  return { paths };
}

function schemaName(rt: ResourceType): string {
  const g = rt.group ? rt.group.split('.').reverse().join('.') : 'core';
  return `io.k8s.api.${g}.${rt.version}.${rt.kind}`;
}

/** The OpenAPI v3 document of one group-version path (`api/v1`, `apis/apps/v1`), or undefined. */
export function openApiDocument(served: ServedGroups, gv: string): Record<string, unknown> | undefined {
  const m = /^(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(gv);
  if (!m) return undefined;
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
    schemas[schemaName(rt)] = {
      type: 'object',
      properties: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { type: 'object' },
      },
      'x-kubernetes-preserve-unknown-fields': true,
      // Deliberately no x-kubernetes-group-version-kind here: kubectl's client-side apply computes its
      // strategic patch from the component schema carrying the GVK, and without full schemas that fails
      // ("unable to find api field"). With no matching component it uses its compiled-in types (built-ins)
      // or a JSON merge patch (custom resources), which gives the right patch.
      description: `${rt.kind} (${apiVersionOf(rt)}); envtest serves no field schemas`,
    };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.32.4' },
    paths,
    components: { schemas },
  };
}
