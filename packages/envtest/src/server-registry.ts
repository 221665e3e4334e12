/**
 * The registry an API server serves from, wired to the server's hooks: CRD validation, validating admission
 * policies, the CRD lifecycle (serving a CRD's resource once it is established, ending its watches when it goes)
 * and, when enabled, the garbage collector's foreground and background deletion.
 */
import { admitByPolicies } from './admission-policy.js';
import { validateCrd } from './crd.js';
import { type CrdHost, crdLifecycle } from './crd-lifecycle.js';
import { collectDependents, collectForeground, releaseOwnersOf } from './gc.js';
import { Registry } from './registry.js';
import type { ResourceTable } from './resource-table.js';
import type { Store } from './store.js';

/** What the registry's hooks need from the server. */
export interface ServerRegistryHost {
  readonly resources: ResourceTable;
  readonly crdHost: CrdHost;
  /** The server's current registry (a restart without state replaces it). */
  readonly registry: () => Registry;
  /** Run the garbage collector's deletions (ApiServerOptions.garbageCollection). */
  readonly garbageCollection: boolean;
}

/** A registry on `store` whose writes run the server's validation, admission, CRD and GC hooks. */
export function newServerRegistry(store: Store, host: ServerRegistryHost): Registry {
  const { resources, crdHost, registry, garbageCollection } = host;
  const types = () => resources.all();
  return new Registry(store, {
    allTypes: types,
    validate: (rt, o) =>
      rt.resource === 'customresourcedefinitions' && rt.group === 'apiextensions.k8s.io'
        ? validateCrd(o)
        : [],
    validatingAdmission: (rt, o, old, subresource) => {
      const m = (o.metadata ?? {}) as Record<string, unknown>;
      admitByPolicies(store, {
        operation: old ? 'UPDATE' : 'CREATE',
        rt,
        namespace: typeof m.namespace === 'string' ? m.namespace : undefined,
        name: typeof m.name === 'string' ? m.name : '',
        object: o,
        oldObject: old,
        subresource,
      });
    },
    afterCreate: (rt, o) => crdLifecycle(crdHost, rt, o, 'create'),
    afterUpdate: (rt, o) => {
      crdLifecycle(crdHost, rt, o, 'update');
      if (garbageCollection) collectForeground(registry, types, o);
    },
    afterDelete: (rt, o, opts) => {
      crdLifecycle(crdHost, rt, o, 'delete');
      if (!garbageCollection) return;
      collectDependents(registry, types, o, opts?.propagationPolicy);
      releaseOwnersOf(registry, types, o);
    },
    foregroundDeletion: garbageCollection,
  });
}
