// The consumer operator that scripts/pack-install.mjs type-checks against the packed tarballs under
// `strict` and `skipLibCheck: false` with no @types but Node's: a `Site` custom kind run as a Deployment, a
// Service and a PodDisruptionBudget it controls, with a finalizer, a field index over a referenced ConfigMap,
// status conditions and events. It is never run; it exists so that the published declarations are compiled as
// a user compiles them (every .d.ts, from an empty project, with only what `npm i @kubeloop/builder` brings).
import {
  asReconciler,
  ConfigMap,
  Deployment,
  enqueueRequestsFromMapFunc,
  finalizer,
  generationChangedPredicate,
  getConfigOrDie,
  isNotFound,
  type Manager,
  newControllerManagedBy,
  newLogger,
  newManager,
  type Reconciler,
  type Request,
  Service,
  setupSignalHandler,
  TerminalError,
} from '@kubeloop/builder';
import {
  type Cached,
  type CachedClient,
  type DeepReadonly,
  deepCopy,
  type KubeObject,
  kind,
  type ObjectOf,
  retryOnConflict,
  toTime,
} from '@kubeloop/client';
import { type Condition, setStatusCondition } from '@kubeloop/client/conditions';
import { createOrUpdate, setControllerReference } from '@kubeloop/client/controllerutil';
import { PodDisruptionBudget } from '@kubeloop/client/kinds';
import type { V1Container, V1ObjectMeta } from '@kubeloop/client/models';

/** example.com/v1 Site: a web site served by `replicas` pods of `image`, configured by a ConfigMap. */
interface SiteObject extends KubeObject {
  apiVersion?: 'example.com/v1';
  kind?: 'Site';
  metadata?: V1ObjectMeta;
  spec: {
    image: string;
    replicas?: number;
    /** A ConfigMap in the Site's namespace mounted at /etc/site; a change of it rolls the pods. */
    configMapName?: string;
    port?: number;
  };
  status?: {
    observedGeneration?: number;
    readyReplicas?: number;
    conditions?: Condition[];
    lastReconciled?: string;
  };
}

const Site = kind<SiteObject>('example.com/v1', 'Site');
const FINALIZER = 'sites.example.com/cleanup';
const CONFIG_INDEX = 'spec.configMapName';

type DeploymentObject = ObjectOf<typeof Deployment>;

/** Labels of a Site's pods; the Deployment's selector and the Service's. */
function podLabels(site: DeepReadonly<SiteObject>): Record<string, string> {
  return { 'app.kubernetes.io/name': 'site', 'app.kubernetes.io/instance': site.metadata?.name ?? '' };
}

/** The one container of a Site's pods. */
function container(site: DeepReadonly<SiteObject>): V1Container {
  const c: V1Container = {
    name: 'web',
    image: site.spec.image,
    ports: [{ name: 'http', containerPort: site.spec.port ?? 8080 }],
  };
  if (site.spec.configMapName) c.volumeMounts = [{ name: 'config', mountPath: '/etc/site', readOnly: true }];
  return c;
}

/** Makes the Site's Deployment match its spec (created or updated; the Site is its controller). */
async function reconcileDeployment(
  client: CachedClient,
  site: Cached<SiteObject>,
  configVersion: string | undefined,
): Promise<DeploymentObject> {
  const labels = podLabels(site);
  const ns = site.metadata.namespace ?? '';
  const { object } = await createOrUpdate(
    client,
    Deployment,
    { namespace: ns, name: site.metadata.name },
    (d) => {
      d.metadata = { ...d.metadata, labels: { ...d.metadata?.labels, ...labels } };
      d.spec = {
        replicas: site.spec.replicas ?? 1,
        selector: d.spec?.selector ?? { matchLabels: labels },
        template: {
          metadata: {
            labels,
            annotations: configVersion ? { 'sites.example.com/config-version': configVersion } : {},
          },
          spec: {
            containers: [container(site)],
            volumes: site.spec.configMapName
              ? [{ name: 'config', configMap: { name: site.spec.configMapName } }]
              : [],
          },
        },
      };
      setControllerReference(site, d);
    },
  );
  return object;
}

/** The Service in front of the pods and a PodDisruptionBudget keeping one of them up. */
async function reconcileNetworking(client: CachedClient, site: Cached<SiteObject>): Promise<void> {
  const key = { namespace: site.metadata.namespace ?? '', name: site.metadata.name };
  const labels = podLabels(site);
  await createOrUpdate(client, Service, key, (svc) => {
    svc.spec = {
      ...svc.spec,
      selector: labels,
      ports: [{ name: 'http', port: 80, targetPort: site.spec.port ?? 8080 }],
    };
    setControllerReference(site, svc);
  });
  await createOrUpdate(client, PodDisruptionBudget, key, (pdb) => {
    pdb.spec = { minAvailable: (site.spec.replicas ?? 1) > 1 ? 1 : 0, selector: { matchLabels: labels } };
    setControllerReference(site, pdb);
  });
}

/** Writes what the Deployment reports into the Site's status (re-read and retried on a conflict). */
async function updateStatus(mgr: Manager, req: Request, deployment: DeploymentObject): Promise<void> {
  const live = mgr.getAPIReader();
  await retryOnConflict(async () => {
    const site = await live.get(Site, req);
    const ready = deployment.status?.readyReplicas ?? 0;
    const wanted = site.spec.replicas ?? 1;
    const status = { ...site.status, conditions: [...(site.status?.conditions ?? [])] };
    setStatusCondition(status.conditions, {
      type: 'Available',
      status: ready >= wanted ? 'True' : 'False',
      reason: ready >= wanted ? 'PodsReady' : 'Progressing',
      message: `${ready}/${wanted} pods ready`,
      observedGeneration: site.metadata?.generation,
    });
    status.observedGeneration = site.metadata?.generation;
    status.readyReplicas = ready;
    status.lastReconciled = toTime(new Date());
    site.status = status;
    await mgr.getClient().status().update(Site, site);
  });
}

/** The Site reconciler: children, then status; a finalizer logs the removal before the object goes. */
function siteReconciler(mgr: Manager): Reconciler {
  const client = mgr.getClient();
  const recorder = mgr.getEventRecorderFor('site-controller');
  return asReconciler(client, Site, async (ctx, cached) => {
    if (!cached.spec.image.includes(':'))
      throw new TerminalError(`spec.image ${cached.spec.image} has no tag`);
    // The cached object is read-only; the finalizer helper writes, so it gets an editable copy.
    const site = deepCopy(cached);
    return finalizer(client, Site, FINALIZER, site, {
      async apply() {
        let configVersion: string | undefined;
        if (cached.spec.configMapName) {
          try {
            const cm = await client.get(ConfigMap, {
              namespace: cached.metadata.namespace ?? '',
              name: cached.spec.configMapName,
            });
            configVersion = cm.metadata.resourceVersion;
          } catch (err) {
            if (!isNotFound(err)) throw err;
            recorder.event(
              cached,
              'Warning',
              'ConfigMissing',
              'Reconcile',
              `no ConfigMap ${cached.spec.configMapName}`,
            );
            return { requeueAfterMs: 30_000 };
          }
        }
        const deployment = await reconcileDeployment(client, cached, configVersion);
        await reconcileNetworking(client, cached);
        await updateStatus(
          mgr,
          { namespace: cached.metadata.namespace ?? '', name: cached.metadata.name },
          deployment,
        );
        ctx.log.info({ ready: deployment.status?.readyReplicas ?? 0 }, 'site reconciled');
        return undefined;
      },
      async cleanup(obj) {
        recorder.event(cached, 'Normal', 'Deleting', 'Cleanup', `site ${obj.metadata?.name} removed`);
        return undefined;
      },
    });
  });
}

/** The Sites that mount a ConfigMap, from the field index over the cache. */
async function sitesUsing(client: CachedClient, cm: DeepReadonly<KubeObject>): Promise<Request[]> {
  const sites = await client.list(Site, {
    namespace: cm.metadata?.namespace ?? '',
    fieldSelector: { [CONFIG_INDEX]: cm.metadata?.name ?? '' },
  });
  return sites.items.map((s) => ({ namespace: s.metadata.namespace ?? '', name: s.metadata.name }));
}

/** Wires the controller: Sites (spec changes), what they own, and the ConfigMaps they mount. */
export function setupSiteController(mgr: Manager): void {
  mgr
    .getFieldIndexer()
    .indexField(Site, CONFIG_INDEX, (s) => (s.spec.configMapName ? [s.spec.configMapName] : []));
  newControllerManagedBy(mgr)
    .for(Site, { predicates: [generationChangedPredicate()] })
    .owns(Deployment)
    .owns(Service)
    .owns(PodDisruptionBudget)
    .watches(
      ConfigMap,
      enqueueRequestsFromMapFunc((cm) => sitesUsing(mgr.getClient(), cm)),
    )
    .withOptions({ maxConcurrentReconciles: 2 })
    .complete(siteReconciler(mgr));
}

/** The operator's entry point: one manager, one controller, until SIGINT/SIGTERM. */
export async function main(): Promise<void> {
  const mgr = newManager(getConfigOrDie(), {
    logger: newLogger(),
    leaderElection: { id: 'sites.example.com' },
    health: { bindAddress: ':8081' },
  });
  setupSiteController(mgr);
  mgr.addHealthzCheck('ping', async () => {});
  await mgr.start(setupSignalHandler());
}
