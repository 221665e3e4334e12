/**
 * A fleet controller (multi-cluster; its test is test/fleet-configmap-sync.test.ts): every ConfigMap labelled
 * `fleet.kubeloop.dev/sync: "true"` in the management cluster is copied into every member cluster (same
 * namespace and name) and kept equal there — created, updated, deleted with its source, put back when someone
 * edits or deletes the copy in a member. Two controllers share one level-based step, `syncCopy(member, key)`:
 *
 * - on the management cluster, `for(ConfigMap)` of the labelled sources: a source changed, so sync it into every
 *   engaged member (one member failing does not stop the others; the request is retried);
 * - on every member (`newMultiClusterControllerManagedBy`), `for(ConfigMap)` of the copies (drift: an edited or
 *   deleted copy) and `watches(Namespace)` mapped to the sources of that namespace, so a member engaged later, or
 *   a namespace created later, gets its copies without waiting for a source to change.
 *
 * Run it against your clusters: `MEMBERS=a.yaml,b.yaml node --experimental-strip-types examples/src/fleet-configmap-sync.ts`
 * (the management cluster is your kubeconfig's).
 */
import {
  enqueueRequestsFromMapFunc,
  getConfigOrDie,
  type MultiClusterManager,
  newControllerManagedBy,
  newMultiClusterControllerManagedBy,
  newMultiClusterManager,
  newPredicateFuncs,
  type Provider,
  type Reconciler,
  type Request,
  StaticProvider,
  setupSignalHandler,
} from '@kubeloop/builder';
import { ConfigMap, deepCopy, isNotFound, Namespace } from '@kubeloop/client';

/** The label that marks a management ConfigMap for the fleet. */
export const SYNC_LABEL = 'fleet.kubeloop.dev/sync';
/** The label on every copy: it names the copy as this controller's (other ConfigMaps in members are left alone). */
export const COPY_LABEL = 'fleet.kubeloop.dev/copy';

const isSource = newPredicateFuncs((o) => o.metadata?.labels?.[SYNC_LABEL] === 'true');
const isCopy = newPredicateFuncs((o) => o.metadata?.labels?.[COPY_LABEL] === 'true');

/**
 * Makes the copy of `key` in member `member` equal the management cluster's source, or absent when the source
 * is gone or no longer labelled. Reads both from the caches; writes only what differs.
 */
export async function syncCopy(
  mgr: MultiClusterManager,
  member: string,
  key: { namespace: string; name: string },
  signal: AbortSignal,
): Promise<void> {
  const source = await mgr
    .getClient()
    .get(ConfigMap, key, { signal })
    .catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)));
  const client = mgr.getCluster(member).getClient();
  const copy = await client
    .get(ConfigMap, key, { signal })
    .catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)));
  if (source?.metadata.labels?.[SYNC_LABEL] !== 'true') {
    // Only our own copies are deleted: a ConfigMap the member's owners made under that name is theirs.
    if (copy?.metadata.labels?.[COPY_LABEL] === 'true')
      await client
        .delete(ConfigMap, key, { signal, preconditions: { uid: copy.metadata.uid } })
        .catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)));
    return;
  }
  const data = { ...source.data };
  if (!copy) {
    // AlreadyExists when the member's cache had not yet seen a copy made a moment ago: the retry updates it.
    await client.create(
      ConfigMap,
      { metadata: { ...key, labels: { [COPY_LABEL]: 'true' } }, data },
      { signal },
    );
    return;
  }
  if (copy.metadata.labels?.[COPY_LABEL] !== 'true') return;
  if (JSON.stringify(copy.data ?? {}) === JSON.stringify(data)) return;
  const next = deepCopy(copy);
  next.data = data;
  // An update carries the cached resourceVersion: a copy changed since is a 409, retried on fresher state.
  await client.update(ConfigMap, next, { signal });
}

/** Adds both controllers to `mgr` (a multi-cluster manager whose provider engages the members). */
export function addFleetSync(mgr: MultiClusterManager): void {
  const sources: Reconciler = {
    async reconcile(ctx, req) {
      const failed: string[] = [];
      await Promise.all(
        mgr.clusterNames().map((member) =>
          syncCopy(mgr, member, req, ctx.signal).catch((err: unknown) => {
            ctx.log.warn({ member, err }, 'sync into member failed');
            failed.push(member);
          }),
        ),
      );
      if (failed.length)
        throw new Error(`sync of ${req.namespace}/${req.name} failed in ${failed.join(', ')}`);
    },
  };
  newControllerManagedBy(mgr)
    .named('fleet-sources')
    .for(ConfigMap, { predicates: [isSource] })
    .complete(sources);

  // Per member: a copy's events, and each namespace's sources (read from the management cache).
  const sourcesIn = async (ns: { metadata?: { name?: string } }): Promise<Request[]> =>
    (
      await mgr.getClient().list(ConfigMap, {
        namespace: ns.metadata?.name ?? '',
        labelSelector: { [SYNC_LABEL]: 'true' },
      })
    ).items.map((cm) => ({ namespace: cm.metadata.namespace ?? '', name: cm.metadata.name }));
  newMultiClusterControllerManagedBy(mgr)
    .named('fleet-copies')
    .for(ConfigMap, { predicates: [isCopy] })
    .watches(Namespace, enqueueRequestsFromMapFunc(sourcesIn))
    .complete({
      async reconcile(ctx, req) {
        if (req.cluster) await syncCopy(mgr, req.cluster, req, ctx.signal);
      },
    });
}

/** The provider of members named `member-<n>` from kubeconfig paths. */
export function membersFrom(paths: readonly string[]): Provider {
  return new StaticProvider(
    Object.fromEntries(paths.map((p, i) => [`member-${i + 1}`, getConfigOrDie({ kubeconfig: p })])),
  );
}

async function main(): Promise<void> {
  const mgr = newMultiClusterManager(getConfigOrDie(), {
    provider: membersFrom((process.env.MEMBERS ?? '').split(',').filter(Boolean)),
  });
  addFleetSync(mgr);
  await mgr.start(setupSignalHandler());
}

if (process.argv[1] === new URL(import.meta.url).pathname) await main();
