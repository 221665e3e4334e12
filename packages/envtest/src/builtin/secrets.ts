/** Secrets (core/v1): type default, stringData folded into data. */
import type { ResourceType } from '../resource-type.js';
import { ageColumn, base, col, ensureObj, obj, setDefault, str } from './common.js';

export const SECRETS: ResourceType = base({
  group: '',
  version: 'v1',
  resource: 'secrets',
  kind: 'Secret',
  singular: 'secret',
  namespaced: true,
  storageVersionHash: 'S6u1pOWzb84=',
  fieldSelectors: { type: (o) => String(o.type ?? '') },
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
