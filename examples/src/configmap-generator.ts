/**
 * A ConfigMap-generator controller with `owns` (`@kubeloop/builder`): for every Deployment, keep a ConfigMap
 * `<deployment>-images` listing the images of its containers, controlled by the Deployment (controller
 * owner reference), like a kubebuilder controller that `For(&appsv1.Deployment{}).Owns(&corev1.ConfigMap{})`.
 * A change to the Deployment or to (or deletion of) its ConfigMap reconciles the Deployment; the garbage
 * collector of a real cluster deletes the ConfigMap with its owner. Reads come from the manager's cache,
 * writes go to the API server; `createOrUpdate` writes nothing when the ConfigMap is already right.
 * Run: `node --experimental-strip-types examples/src/configmap-generator.ts` (stops on SIGINT/SIGTERM).
 */
import {
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
  Deployment,
  isNotFound,
  type ObjectOf,
} from '@kubeloop/client';
import { createOrUpdate, setControllerReference } from '@kubeloop/client/controllerutil';

/** The name of the ConfigMap generated for the Deployment `name`. */
export const configMapNameFor = (name: string): string => `${name}-images`;

/**
 * The generator's reconciler on `client` (reads and writes); `addConfigMapGenerator` gives it the manager's
 * client, a test can give it `@kubeloop/testing`'s fake (`test/configmap-generator.test.ts`).
 */
export function configMapGeneratorReconciler(client: CachedClient): Reconciler {
  return {
    async reconcile(ctx, req) {
      let deployment: Cached<ObjectOf<typeof Deployment>>;
      try {
        deployment = await client.get(Deployment, req, { signal: ctx.signal });
      } catch (err) {
        if (isNotFound(err)) return {}; // deleted: the ConfigMap goes with it (owner reference)
        throw err; // requeued with backoff
      }
      const images = (deployment.spec?.template.spec?.containers ?? []).map((c) => `${c.name}=${c.image}`);
      const key = { namespace: req.namespace, name: configMapNameFor(req.name) };
      const { result } = await createOrUpdate(client, ConfigMap, key, (cm) => {
        cm.data = { images: images.join('\n') };
        setControllerReference(deployment, cm);
      });
      if (result !== 'unchanged') ctx.log.info({ configMap: key.name, result }, 'configmap written');
      return {};
    },
  };
}

/** Registers the generator controller on `mgr` (not started yet). */
export function addConfigMapGenerator(mgr: Manager): void {
  newControllerManagedBy(mgr)
    .named('configmap-generator')
    .for(Deployment)
    .owns(ConfigMap)
    .complete(configMapGeneratorReconciler(mgr.getClient()));
}

async function main(): Promise<void> {
  const mgr = newManager(getConfig(), {});
  addConfigMapGenerator(mgr);
  await mgr.start(setupSignalHandler());
}

if (process.argv[1] === new URL(import.meta.url).pathname) await main();
