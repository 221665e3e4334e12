import type { Kind, KubeObject } from '@kubeloop/client';
import type { Static, TSchema } from 'typebox';
import { SchemaError } from './errors.js';
import { toStructural } from './structural.js';
import type { JSONSchemaProps, PrinterColumn, ScaleSubresource, ValidationRule } from './types.js';

/** A custom object: type meta, object meta, a `spec` and an optional `status` (absent until a controller writes it). */
export interface CustomObject<Spec, Status = never> extends KubeObject {
  apiVersion?: string;
  kind?: string;
  // exactly KubeObject's (no added `| undefined`), so it stays a Kind<KubeObject> under exactOptionalPropertyTypes
  metadata?: NonNullable<KubeObject['metadata']>;
  spec: Spec;
  status?: Status;
}

/** What {@link defineKind} takes: one version of a custom kind. */
export interface KindDefinition<Spec extends TSchema, Status extends TSchema | undefined = undefined> {
  /** API group, e.g. `example.com` (a DNS subdomain with at least one dot). */
  readonly group: string;
  /** Version, e.g. `v1`, `v1beta1` (a DNS label: lower case, starting with a letter). */
  readonly version: string;
  /** Kind, UpperCamelCase, e.g. `WebApp`. */
  readonly kind: string;
  /** Resource name, lower case; default: the kind lower-cased and pluralised as kubectl/kubebuilder guess it. */
  readonly plural?: string;
  /** Default: the kind lower-cased. */
  readonly singular?: string;
  /** Default: `<Kind>List`. */
  readonly listKind?: string;
  /** Default `Namespaced`. */
  readonly scope?: 'Namespaced' | 'Cluster';
  readonly shortNames?: readonly string[];
  /** E.g. `['all']` to appear in `kubectl get all`. */
  readonly categories?: readonly string[];
  /** The schema of `.spec` (a TypeBox object). */
  readonly spec: Spec;
  /** The schema of `.status`; with it the `status` subresource is enabled unless `subresources.status` is false. */
  readonly status?: Status;
  /** A description of the kind (the root schema's `description`). */
  readonly description?: string;
  /** Whether `.spec` is required; default true (the TS type says `spec: Spec`). */
  readonly specRequired?: boolean;
  /** Served by the API server; default true. */
  readonly served?: boolean;
  /** The version objects are stored in; default true (with several versions exactly one is). */
  readonly storage?: boolean;
  /** Marks the version deprecated: clients get a warning header on every request. */
  readonly deprecated?: boolean;
  /** The warning text instead of the server's default (`<group>/<version> <Kind> is deprecated`). */
  readonly deprecationWarning?: string;
  readonly subresources?: {
    /** Default: true when a status schema is given. */
    readonly status?: boolean;
    readonly scale?: ScaleSubresource;
  };
  readonly printerColumns?: readonly PrinterColumn[];
  /** CEL rules on the whole object (`self.spec`, `self.metadata.name`, `oldSelf`…). */
  readonly validations?: readonly ValidationRule[];
  /** Fields usable in field selectors (`spec.color`), kube 1.31+ (beta, on by default in 1.32). */
  readonly selectableFields?: readonly string[];
}

/**
 * A kind descriptor for a custom resource defined by {@link defineKind}: usable everywhere kubeloop takes a
 * {@link Kind} (`client.get(WebApp, key)`, `newControllerManagedBy(mgr).for(WebApp)`), and carrying everything
 * {@link customResourceDefinition} and {@link validate} need.
 */
export interface CustomResourceKind<T extends KubeObject = KubeObject> extends Kind<T> {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly singular: string;
  readonly listKind: string;
  readonly scope: 'Namespaced' | 'Cluster';
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly served: boolean;
  readonly storage: boolean;
  readonly deprecated: boolean;
  readonly deprecationWarning?: string;
  readonly subresources: { readonly status: boolean; readonly scale?: ScaleSubresource };
  readonly printerColumns: readonly PrinterColumn[];
  readonly selectableFields: readonly string[];
  /** The version's structural `openAPIV3Schema`, as the CRD carries it. */
  readonly schema: JSONSchemaProps;
  /** Brand: tells custom resource kinds from other descriptors at run time. */
  readonly customResource: true;
}

/** Whether a value is a {@link CustomResourceKind} (made by {@link defineKind}). */
export function isCustomResourceKind(v: unknown): v is CustomResourceKind {
  return typeof v === 'object' && v !== null && (v as { customResource?: unknown }).customResource === true;
}

type StatusOf<S> = S extends TSchema ? Static<S> : never;

/**
 * apimachinery's `meta.UnsafeGuessKindToResource`: the lower-cased kind, pluralised with the English rules
 * kubectl and kubebuilder use (`Policy` → `policies`, `Ingress` → `ingresses`, `WebApp` → `webapps`).
 */
export function guessPlural(kind: string): string {
  const k = kind.toLowerCase();
  if (k === '') return k;
  if (k.endsWith('s') || k.endsWith('x') || k.endsWith('z') || k.endsWith('ch') || k.endsWith('sh'))
    return `${k}es`;
  if (k.endsWith('y') && !/[aeiou]y$/.test(k)) return `${k.slice(0, -1)}ies`;
  return `${k}s`;
}

const DNS_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;

/**
 * Defines one version of a custom kind from TypeBox schemas. The result is a frozen {@link CustomResourceKind}:
 * a kind descriptor typed `Kind<CustomObject<Static<Spec>, Static<Status>>>` plus the CRD facts. The schemas are
 * turned into a structural schema here, so a schema kube cannot express throws a {@link SchemaError} naming the
 * property path when the module is loaded (CEL rules are compiled by {@link customResourceDefinition}).
 *
 * Follows controller-gen's defaults: plural guessed from the kind, `listKind` `<Kind>List`, `spec` and `status`
 * properties under a root with `apiVersion`, `kind` and `metadata`; the status subresource on when there is a status.
 */
export function defineKind<Spec extends TSchema, Status extends TSchema | undefined = undefined>(
  def: KindDefinition<Spec, Status>,
): CustomResourceKind<CustomObject<Static<Spec>, StatusOf<Status>>> {
  if (!DNS_SUBDOMAIN.test(def.group) || def.group.length > 253)
    throw new SchemaError(
      '',
      `group ${JSON.stringify(def.group)}: must be a DNS subdomain with at least one dot (e.g. example.com)`,
    );
  if (!DNS_LABEL.test(def.version))
    throw new SchemaError(
      '',
      `version ${JSON.stringify(def.version)}: must be a DNS label such as v1 or v1beta1`,
    );
  if (!/^[A-Z][A-Za-z0-9]*$/.test(def.kind))
    throw new SchemaError('', `kind ${JSON.stringify(def.kind)}: must be UpperCamelCase letters and digits`);
  const plural = def.plural ?? guessPlural(def.kind);
  const singular = def.singular ?? def.kind.toLowerCase();
  for (const [what, v] of [
    ['plural', plural],
    ['singular', singular],
    ...(def.shortNames ?? []).map((s) => ['shortNames', s]),
    ...(def.categories ?? []).map((s) => ['categories', s]),
  ] as const) {
    if (!DNS_LABEL.test(v))
      throw new SchemaError('', `${what} ${JSON.stringify(v)}: must be a lower-case DNS label`);
  }
  const properties: Record<string, JSONSchemaProps> = {
    apiVersion: {
      type: 'string',
      description: 'APIVersion defines the versioned schema of this representation of an object.',
    },
    kind: {
      type: 'string',
      description: 'Kind is a string value representing the REST resource this object represents.',
    },
    metadata: { type: 'object' },
    spec: toStructural(def.spec, 'spec'),
  };
  if (properties.spec?.type !== 'object')
    throw new SchemaError('spec', 'spec must be an object schema (Type.Object)');
  if (def.status !== undefined) {
    properties.status = toStructural(def.status, 'status');
    if (properties.status.type !== 'object')
      throw new SchemaError('status', 'status must be an object schema (Type.Object)');
  }
  const root: JSONSchemaProps = { type: 'object', properties };
  if (def.description) root.description = def.description;
  if (def.specRequired !== false) root.required = ['spec'];
  if (def.validations && def.validations.length > 0)
    root['x-kubernetes-validations'] = toStructural(
      { type: 'object', 'x-kubernetes-validations': def.validations },
      '',
    )['x-kubernetes-validations'];
  const statusSub = def.subresources?.status ?? def.status !== undefined;
  if (statusSub && !properties.status) throw new SchemaError('', 'subresources.status needs a status schema');
  if (def.subresources?.scale) checkScale(def.subresources.scale, properties);
  for (const c of def.printerColumns ?? []) {
    if (!c.jsonPath.startsWith('.'))
      throw new SchemaError(
        '',
        `printer column ${JSON.stringify(c.name)}: jsonPath must start with "." (e.g. .spec.replicas)`,
      );
  }
  const descriptor: CustomResourceKind<CustomObject<Static<Spec>, StatusOf<Status>>> = {
    apiVersion: `${def.group}/${def.version}`,
    kind: def.kind,
    group: def.group,
    version: def.version,
    plural,
    singular,
    listKind: def.listKind ?? `${def.kind}List`,
    scope: def.scope ?? 'Namespaced',
    shortNames: Object.freeze([...(def.shortNames ?? [])]),
    categories: Object.freeze([...(def.categories ?? [])]),
    served: def.served ?? true,
    storage: def.storage ?? true,
    deprecated: def.deprecated ?? false,
    ...(def.deprecationWarning !== undefined ? { deprecationWarning: def.deprecationWarning } : {}),
    subresources: Object.freeze({
      status: statusSub,
      ...(def.subresources?.scale ? { scale: def.subresources.scale } : {}),
    }),
    printerColumns: Object.freeze([...(def.printerColumns ?? [])]),
    selectableFields: Object.freeze([...(def.selectableFields ?? [])]),
    schema: deepFreeze(root),
    customResource: true,
  };
  if (descriptor.deprecationWarning !== undefined && !descriptor.deprecated)
    throw new SchemaError('', 'deprecationWarning is set but deprecated is not true');
  return Object.freeze(descriptor);
}

function schemaAt(
  properties: Record<string, JSONSchemaProps>,
  jsonPath: string,
): JSONSchemaProps | undefined {
  const parts = jsonPath.split('.').slice(1);
  let node: JSONSchemaProps | undefined = { type: 'object', properties };
  for (const p of parts) node = node?.properties?.[p];
  return node;
}

function checkScale(scale: ScaleSubresource, properties: Record<string, JSONSchemaProps>): void {
  for (const [what, path, prefix, type] of [
    ['specReplicasPath', scale.specReplicasPath, '.spec.', 'integer'],
    ['statusReplicasPath', scale.statusReplicasPath, '.status.', 'integer'],
    ['labelSelectorPath', scale.labelSelectorPath, '.status.', 'string'],
  ] as const) {
    if (path === undefined) continue;
    const where = `subresources.scale.${what}`;
    if (!path.startsWith(prefix) || !/^(\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(path))
      throw new SchemaError(
        '',
        `${where}: Invalid value: ${JSON.stringify(path)}: should be a json path under ${prefix.slice(0, -1)}`,
      );
    const node = schemaAt(properties, path);
    if (!node) throw new SchemaError('', `${where}: ${path} is not a property of the schema`);
    if (node.type !== type) throw new SchemaError('', `${where}: ${path} must be of type ${type}`);
  }
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    for (const child of Object.values(v)) deepFreeze(child);
    Object.freeze(v);
  }
  return v;
}
