/**
 * Secrets (core/v1): type default, stringData folded into data, and core validation's `ValidateSecret(Update)`:
 * data keys, the keys each built-in type requires, type and `immutable` rules on update.
 */
import { type FieldError, fieldInvalid, fieldRequired } from '../errors.js';
import type { KObject, ResourceType } from '../resource-type.js';
import { ageColumn, base, col, ensureObj, obj, setDefault, str } from './common.js';
import { immutableErrors, validateConfigKeys } from './configmaps.js';

/** The data keys a built-in Secret type must hold (`ValidateSecret`). */
function typeErrors(o: KObject): FieldError[] {
  const data = obj(o.data);
  const has = (k: string) => Object.hasOwn(data, k);
  const need = (k: string) => fieldRequired(`data[${k}]`);
  switch (o.type) {
    case 'kubernetes.io/service-account-token': {
      const name = obj(obj(o.metadata).annotations)['kubernetes.io/service-account.name'];
      return typeof name === 'string' && name !== ''
        ? []
        : [fieldRequired('metadata.annotations[kubernetes.io/service-account.name]')];
    }
    case 'kubernetes.io/dockercfg':
      return has('.dockercfg') ? [] : [need('.dockercfg')];
    case 'kubernetes.io/dockerconfigjson':
      return has('.dockerconfigjson') ? [] : [need('.dockerconfigjson')];
    case 'kubernetes.io/basic-auth':
      return has('username') || has('password') ? [] : [need('username'), need('password')];
    case 'kubernetes.io/ssh-auth':
      return typeof data['ssh-privatekey'] === 'string' && data['ssh-privatekey'] !== ''
        ? []
        : [need('ssh-privatekey')];
    case 'kubernetes.io/tls':
      return [...(has('tls.crt') ? [] : [need('tls.crt')]), ...(has('tls.key') ? [] : [need('tls.key')])];
    default:
      return [];
  }
}

function validateSecret(o: KObject, old: KObject | undefined): FieldError[] {
  const errs: FieldError[] = [];
  if (old && (o.type ?? '') !== (old.type ?? ''))
    errs.push(fieldInvalid('type', o.type ?? '', 'field is immutable'));
  for (const e of immutableErrors(o, old, ['data'])) errs.push(e);
  for (const e of validateConfigKeys(o.data, 'data')) errs.push(e);
  for (const e of typeErrors(o)) errs.push(e);
  return errs;
}

export const SECRETS: ResourceType = base({
  group: '',
  version: 'v1',
  resource: 'secrets',
  kind: 'Secret',
  singular: 'secret',
  namespaced: true,
  storageVersionHash: 'S6u1pOWzb84=',
  fieldSelectors: { type: (o) => String(o.type ?? '') },
  validate: validateSecret,
  defaults(o) {
    setDefault(o, 'type', 'Opaque');
    // stringData is write-only: merged into data (base64) and dropped
    const sd = o.stringData;
    if (sd && typeof sd === 'object') {
      const data = ensureObj(o, 'data');
      for (const [k, v] of Object.entries(sd)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
      delete o.stringData;
    }
  },
  tableColumns: [
    col('Type', 'string', 'The type of the secret', (o) => str(o.type)),
    col('Data', 'string', 'The number of entries in the secret', (o) => Object.keys(obj(o.data)).length),
    ageColumn,
  ],
});
