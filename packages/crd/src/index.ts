export {
  EmbeddedResource,
  IntOrString,
  ListAtomic,
  ListMap,
  type ListOptions,
  ListSet,
  type NodeOptions,
  Nullable,
  PreserveUnknownFields,
  Quantity,
  WithRules,
} from './builders.js';
export { type CliIo, runCli } from './cli-main.js';
export { StatusCondition, type StatusConditionObject, StatusConditions } from './conditions.js';
export { customResourceDefinition, customResourceDefinitions } from './crd.js';
export { applyDefaults, prune } from './defaults.js';
export { CelCompileError, SchemaError } from './errors.js';
export {
  type CustomObject,
  type CustomResourceKind,
  defineKind,
  guessPlural,
  isCustomResourceKind,
  type KindDefinition,
} from './kind.js';
export {
  type ControllerRbac,
  type ControllerRbacOptions,
  controllerRbac,
  isControllerRbac,
  type Permission,
  type PolicyRule,
  type RbacManifestOptions,
  rbacManifests,
  rbacRules,
  resourceOf,
  type Verb,
} from './rbac.js';
export { toStructural } from './structural.js';
export { readCrdFiles, type TypesFromCrdsOptions, typesFromCrds } from './typegen.js';
export type {
  CustomResourceDefinition,
  CustomResourceDefinitionNames,
  CustomResourceDefinitionVersion,
  CustomResourceSubresources,
  JSONSchemaProps,
  PrinterColumn,
  ScaleSubresource,
  ValidationRule,
} from './types.js';
export {
  assertValid,
  type FieldError,
  type FieldErrorType,
  InvalidObjectError,
  validate,
} from './validate.js';
export { toYaml } from './yaml.js';
