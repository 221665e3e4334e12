/**
 * A finalizer controller (`@kubeloop/builder` + `@kubeloop/client/controllerutil`): ConfigMaps labelled
 * `example.kubeloop.io/backup=true` get the finalizer `example.kubeloop.io/backup`; when one is deleted the
 * API server only sets `deletionTimestamp`, the controller runs its cleanup (here: `onCleanup`, e.g. copy
 * the data elsewhere) and removes the finalizer, and only then the object goes away — the kubebuilder
 * finalizer pattern. Cleanup that throws is retried with backoff, the finalizer stays until it succeeds.
 * Run: `node --experimental-strip-types examples/src/finalizer.ts` (stops on SIGINT/SIGTERM).
 */
import {
  type EventRecorder,
  getConfig,
  type Manager,
  newControllerManagedBy,
  newManager,
  type Reconciler,
  setupSignalHandler,
} from '@kubeloop/builder';
import {
  type Cached,
  type CachedClient,
  ConfigMap,
  deepCopy,
  isNotFound,
  type ObjectOf,
} from '@kubeloop/client';
import { addFinalizer, containsFinalizer, removeFinalizer } from '@kubeloop/client/controllerutil';

/** The finalizer this controller owns. */
export const FINALIZER = 'example.kubeloop.io/backup';
/** The label that opts a ConfigMap in. */
export const LABEL = 'example.kubeloop.io/backup';

/** The ConfigMap object type, read off the `ConfigMap` kind descriptor. */
export type ConfigMapObject = ObjectOf<typeof ConfigMap>;

/**
 * The finalizer's reconciler on `client`; `onCleanup` runs once per deletion before the finalizer goes, and a
 * `Normal` `BackedUp` Event is recorded about the ConfigMap when it succeeded. `addFinalizerController` gives
 * it the manager's client and recorder; a test can give it `@kubeloop/testing`'s fake and `FakeRecorder`.
 */
export function finalizerReconciler(
  client: CachedClient,
  onCleanup: (cm: Cached<ConfigMapObject>) => Promise<void>,
  recorder?: EventRecorder,
): Reconciler {
  return {
    async reconcile(ctx, req) {
      let cm: Cached<ConfigMapObject>;
      try {
        cm = await client.get(ConfigMap, req, { signal: ctx.signal });
      } catch (err) {
        if (isNotFound(err)) return {};
        throw err;
      }
      if (cm.metadata?.labels?.[LABEL] !== 'true') return {};
      // Cached objects are frozen and shared: change a copy.
      const copy = deepCopy(cm);
      if (!cm.metadata?.deletionTimestamp) {
        if (addFinalizer(copy, FINALIZER)) await client.update(ConfigMap, copy, { signal: ctx.signal });
        return {};
      }
      if (!containsFinalizer(cm, FINALIZER)) return {};
      await onCleanup(cm); // throws -> requeued with backoff, the finalizer stays
      recorder?.event(cm, 'Normal', 'BackedUp', 'Cleanup', 'data backed up before deletion');
      removeFinalizer(copy, FINALIZER);
      await client.update(ConfigMap, copy, { signal: ctx.signal }); // 409 on a stale copy -> requeued
      return {};
    },
  };
}

/** Registers the finalizer controller on `mgr`; `onCleanup` runs once per deletion before the finalizer goes. */
export function addFinalizerController(
  mgr: Manager,
  onCleanup: (cm: Cached<ConfigMapObject>) => Promise<void>,
): void {
  newControllerManagedBy(mgr)
    .named('backup-finalizer')
    .for(ConfigMap)
    .complete(finalizerReconciler(mgr.getClient(), onCleanup, mgr.getEventRecorderFor('backup-finalizer')));
}

async function main(): Promise<void> {
  const mgr = newManager(getConfig(), {});
  addFinalizerController(mgr, async (cm) => {
    console.log('backing up', `${cm.metadata?.namespace}/${cm.metadata?.name}`, Object.keys(cm.data ?? {}));
  });
  await mgr.start(setupSignalHandler());
}

if (process.argv[1] === new URL(import.meta.url).pathname) await main();
