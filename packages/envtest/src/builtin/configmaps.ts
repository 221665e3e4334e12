/** ConfigMaps (core/v1): key validation and immutability as core validation's `ValidateConfigMap(Update)`. */
import { type FieldError, fieldForbidden, fieldInvalid } from '../errors.js';
import type { KObject, ResourceType } from '../resource-type.js';
import { ageColumn, base, col, obj } from './common.js';

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const CONFIG_KEY_MSG =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/** apimachinery `IsConfigMapKey`: ≤ 253 characters, `[-._a-zA-Z0-9]+`, not `.`/`..`, no leading `..`. */
export function configKeyErrors(key: string): string[] {
  const out: string[] = [];
  if (key.length > 253) out.push('must be no more than 253 characters');
  if (!CONFIG_KEY.test(key)) out.push(CONFIG_KEY_MSG);
  if (key === '.') out.push("must not be '.'");
  else if (key === '..') out.push("must not be '..'");
  else if (key.startsWith('..')) out.push("must not start with '..'");
  return out;
}

/** Every key of the map at `field` (`data[key]` paths), each error an Invalid value naming the key. */
export function validateConfigKeys(m: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of Object.keys(obj(m)))
    for (const msg of configKeyErrors(key)) errs.push(fieldInvalid(`${field}[${key}]`, key, msg));
  return errs;
}

const IMMUTABLE_SET = 'field is immutable when `immutable` is set';
const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** Once `immutable: true` is stored: it stays set and the listed fields keep their values. */
export function immutableErrors(
  o: KObject,
  old: KObject | undefined,
  fields: readonly string[],
): FieldError[] {
  if (old?.immutable !== true) return [];
  const errs: FieldError[] = [];
  if (o.immutable !== true) errs.push(fieldForbidden('immutable', IMMUTABLE_SET));
  for (const f of fields) if (!same(o[f], old[f])) errs.push(fieldForbidden(f, IMMUTABLE_SET));
  return errs;
}

function validateConfigMap(o: KObject, old: KObject | undefined): FieldError[] {
  const errs = immutableErrors(o, old, ['data', 'binaryData']);
  const data = obj(o.data);
  const bin = obj(o.binaryData);
  for (const key of Object.keys(data)) {
    for (const msg of configKeyErrors(key)) errs.push(fieldInvalid(`data[${key}]`, key, msg));
    if (Object.hasOwn(bin, key))
      errs.push(fieldInvalid(`data[${key}]`, key, 'duplicate of key present in binaryData'));
  }
  for (const key of Object.keys(bin)) {
    for (const msg of configKeyErrors(key)) errs.push(fieldInvalid(`binaryData[${key}]`, key, msg));
    if (Object.hasOwn(data, key))
      errs.push(fieldInvalid(`binaryData[${key}]`, key, 'duplicate of key present in data'));
  }
  return errs;
}

export const CONFIGMAPS: ResourceType = base({
  group: '',
  version: 'v1',
  resource: 'configmaps',
  kind: 'ConfigMap',
  singular: 'configmap',
  namespaced: true,
  shortNames: ['cm'],
  storageVersionHash: 'qFsyl6wFWjQ=',
  validate: validateConfigMap,
  tableColumns: [
    col(
      'Data',
      'string',
      'Data contains the configuration data.',
      (o) => Object.keys(obj(o.data)).length + Object.keys(obj(o.binaryData)).length,
    ),
    ageColumn,
  ],
});
