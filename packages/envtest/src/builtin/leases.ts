/** Leases (coordination.k8s.io/v1): created on update, validated as kube-apiserver ValidateLeaseSpec. */
import { type FieldError, fieldInvalid } from '../errors.js';
import { getPath, type ResourceType } from '../resource-type.js';
import { ageColumn, base, col, obj, setDefault, str } from './common.js';

export const LEASES: ResourceType = base({
  group: 'coordination.k8s.io',
  version: 'v1',
  resource: 'leases',
  kind: 'Lease',
  singular: 'lease',
  namespaced: true,
  allowCreateOnUpdate: true,
  storageVersionHash: 'gqkMMb/YqFM=',
  defaults(o) {
    setDefault(o, 'spec', {});
  },
  // kube-apiserver's ValidateLeaseSpec: a duration, when set, is > 0; transitions, when set, are >= 0.
  validate(o) {
    const errs: FieldError[] = [];
    const spec = obj(o.spec);
    const d = spec.leaseDurationSeconds;
    if (d !== undefined && d !== null && !(typeof d === 'number' && d > 0)) {
      errs.push(fieldInvalid('spec.leaseDurationSeconds', d, 'must be greater than 0'));
    }
    const t = spec.leaseTransitions;
    if (t !== undefined && t !== null && !(typeof t === 'number' && t >= 0)) {
      errs.push(fieldInvalid('spec.leaseTransitions', t, 'must be greater than or equal to 0'));
    }
    return errs;
  },
  tableColumns: [
    col('Holder', 'string', 'The holder of the lease', (o) => str(getPath(o, 'spec.holderIdentity'), '')),
    ageColumn,
  ],
});
