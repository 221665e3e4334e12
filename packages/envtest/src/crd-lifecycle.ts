/**
 * What the server does when a CustomResourceDefinition is written (apiextensions-apiserver's controllers,
 * run inline): serve its versions at once, mark it NamesAccepted + Established by a status write, and on
 * delete remove its custom resources and end their watches.
 */
import { crdResourceTypes, establishedStatus } from './crd.js';
import type { Registry } from './registry.js';
import { nowTimestamp } from './registry.js';
import type { ResourceTable } from './resource-table.js';
import type { KObject, ResourceType } from './resource-type.js';
import type { Store } from './store.js';
import type { WatchSet } from './watch-set.js';

/** The server parts the CRD lifecycle changes (store and registry are replaced by a state-losing restart). */
export interface CrdHost {
  readonly resources: ResourceTable;
  store(): Store;
  registry(): Registry;
  readonly watches: WatchSet;
}

/** CRD lifecycle: serve on create, mark Established (a status write), clean up on delete. */
export function crdLifecycle(
  host: CrdHost,
  rt: ResourceType,
  o: Readonly<KObject>,
  op: 'create' | 'update' | 'delete',
): void {
  if (rt.resource !== 'customresourcedefinitions' || rt.group !== 'apiextensions.k8s.io') return;
  const name = String((o.metadata as Record<string, unknown>).name);
  if (op === 'delete') {
    const types = host.resources.all().filter((t) => t.crdName === name);
    for (const t of types.slice(0, 1)) {
      const snap = host.store().snapshot(t.storageKey);
      for (const k of snap.keys) host.store().remove(t.storageKey, k);
      // the custom resource's storage is torn down: its watches end (cleanly) as on a real server
      host.watches.stopFor(t.storageKey);
    }
    host.resources.removeCrd(name);
    return;
  }
  const deleting = !!(o.metadata as Record<string, unknown>).deletionTimestamp;
  if (deleting) return;
  host.resources.removeCrd(name);
  for (const t of crdResourceTypes(o as KObject)) host.resources.add(t);
  const conds =
    (o.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
  if (!conds.some((c) => c.type === 'Established' && c.status === 'True')) {
    const store = host.store();
    setImmediate(() => {
      if (host.store() !== store) return;
      try {
        host.registry().patch(
          rt,
          undefined,
          name,
          (cur) => {
            cur.status = establishedStatus(cur, nowTimestamp());
            delete (cur.metadata as Record<string, unknown>).resourceVersion;
            return cur;
          },
          { fieldManager: 'kube-apiserver', subresource: 'status' },
        );
      } catch {
        // deleted in the meantime
      }
    });
  }
}
