/**
 * The wire shapes of apiextensions.k8s.io/v1 `CustomResourceDefinition`, with the field names of the JSON the API
 * server reads (`x-kubernetes-int-or-string`, `default`, `$ref`…), not the renamed fields of
 * `@kubernetes/client-node`'s models. Only what kubeloop generates and reads is typed; the server has more.
 */

/** One CEL rule of `x-kubernetes-validations` (apiextensions v1 `ValidationRule`). */
export interface ValidationRule {
  /** The CEL expression; `self` is the value of the node the rule sits on, `oldSelf` its previous value on update. */
  readonly rule: string;
  /** A fixed message when the rule is false (the server's default is `failed rule: <rule>`). */
  readonly message?: string;
  /** A CEL expression that evaluates to the message (a string); wins over `message` when it yields one. */
  readonly messageExpression?: string;
  /** The reason the server reports (HTTP 422 cause type); default `FieldValueInvalid`. */
  readonly reason?:
    | 'FieldValueInvalid'
    | 'FieldValueForbidden'
    | 'FieldValueRequired'
    | 'FieldValueDuplicate';
  /** A JSONPath-like path relative to the node (`.spec.replicas`, `.items['a.b']`) the error is reported at. */
  readonly fieldPath?: string;
  /** A transition rule that also runs on create, and when the old value is absent, with `oldSelf` an optional. */
  readonly optionalOldSelf?: boolean;
}

/** apiextensions v1 `JSONSchemaProps`: one node of an OpenAPI v3 (structural) schema as the server stores it. */
export interface JSONSchemaProps {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  title?: string;
  description?: string;
  default?: unknown;
  example?: unknown;
  nullable?: boolean;
  enum?: unknown[];
  maximum?: number;
  exclusiveMaximum?: boolean;
  minimum?: number;
  exclusiveMinimum?: boolean;
  multipleOf?: number;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  maxProperties?: number;
  minProperties?: number;
  required?: string[];
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  items?: JSONSchemaProps;
  allOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'granular' | 'atomic';
  'x-kubernetes-validations'?: ValidationRule[];
}

/** One `additionalPrinterColumns` entry: a column of `kubectl get`. */
export interface PrinterColumn {
  /** Column header, e.g. `Replicas`. */
  readonly name: string;
  /** The column's OpenAPI type; `date` prints an age. */
  readonly type: 'integer' | 'number' | 'string' | 'boolean' | 'date';
  /** A simple JSONPath into the object, e.g. `.spec.replicas`. */
  readonly jsonPath: string;
  readonly description?: string;
  readonly format?: string;
  /** 0 shows in `kubectl get`; greater only with `-o wide`. */
  readonly priority?: number;
}

/** The `scale` subresource: where `kubectl scale` and the HorizontalPodAutoscaler read and write replicas. */
export interface ScaleSubresource {
  /** JSONPath of the desired replicas under `.spec`, e.g. `.spec.replicas`. */
  readonly specReplicasPath: string;
  /** JSONPath of the observed replicas under `.status`, e.g. `.status.replicas`. */
  readonly statusReplicasPath: string;
  /** JSONPath of a string label selector under `.status` (for the HorizontalPodAutoscaler). */
  readonly labelSelectorPath?: string;
}

/** The subresources of one version. */
export interface CustomResourceSubresources {
  status?: Record<string, never>;
  scale?: ScaleSubresource;
}

/** One entry of `spec.versions`. */
export interface CustomResourceDefinitionVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema: { openAPIV3Schema: JSONSchemaProps };
  subresources?: CustomResourceSubresources;
  additionalPrinterColumns?: PrinterColumn[];
  selectableFields?: { jsonPath: string }[];
}

/** `spec.names`. */
export interface CustomResourceDefinitionNames {
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames?: string[];
  categories?: string[];
}

/** apiextensions.k8s.io/v1 `CustomResourceDefinition` as it is sent to the server. */
export type CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    group: string;
    names: CustomResourceDefinitionNames;
    scope: 'Namespaced' | 'Cluster';
    versions: CustomResourceDefinitionVersion[];
    preserveUnknownFields?: boolean;
  };
  status?: unknown;
};
