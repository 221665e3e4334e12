/**
 * A controller tested with the chaos harness (`@kubeloop/testing`; its test is test/mirror-controller.test.ts):
 * every ConfigMap whose name starts with a prefix gets a copy `mirror-<name>` with the same data, and the copy
 * is deleted when its source is gone. The reconciler is level-based — it reads the source's current state
 * and converges, whatever events were missed — which is what lets it pass a run with dropped, expired,
 * black-holed and broken watches, throttling, 5xx and API-server restarts.
 */
import { type Manager, newControllerManagedBy, type Reconciler } from '@kubeloop/builder';
import { type CachedClient, ConfigMap, ignoreNotFound, isNotFound } from '@kubeloop/client';
import { createOrUpdate } from '@kubeloop/client/controllerutil';

/** The name of the mirror of the ConfigMap `name`. */
export const mirrorNameOf = (name: string): string => `mirror-${name}`;

/**
 * The reconciler: make `mirror-<name>` hold the data of `<name>`, or not exist when `<name>` does not; other
 * ConfigMaps (the mirrors themselves included) are left alone.
 */
export function mirrorReconciler(client: CachedClient, prefix: string): Reconciler {
  return {
    async reconcile(ctx, req) {
      if (!req.name.startsWith(prefix)) return {};
      const mirror = { namespace: req.namespace, name: mirrorNameOf(req.name) };
      let data: Record<string, string> | undefined;
      try {
        data = (await client.get(ConfigMap, req, { signal: ctx.signal })).data ?? {};
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      if (data === undefined) {
        await client.delete(ConfigMap, mirror, { signal: ctx.signal }).catch((err: unknown) => {
          if (ignoreNotFound(err) !== undefined) throw err;
        });
        return {};
      }
      await createOrUpdate(client, ConfigMap, mirror, (cm) => {
        cm.data = { ...data };
      });
      return {};
    },
  };
}

/**
 * Registers the mirror controller on `mgr` for ConfigMaps named `<prefix>…`; `wrap` lets a test put a probe
 * around the reconciler (the chaos harness's `probe.wrap`).
 */
export function addMirrorController(
  mgr: Manager,
  prefix: string,
  wrap: (r: Reconciler) => Reconciler = (r) => r,
): void {
  newControllerManagedBy(mgr)
    .named('configmap-mirror')
    .for(ConfigMap)
    .complete(wrap(mirrorReconciler(mgr.getClient(), prefix)));
}
