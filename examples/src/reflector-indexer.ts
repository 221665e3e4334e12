/**
 * A Reflector feeding an Indexer, without the builder or an informer (`@kubeloop/cache` over
 * `@kubeloop/client`): client-go's `cache.NewReflector(lw, &v1.Pod{}, store, 0)` with a store that has a
 * secondary index. The Reflector lists, then watches from the list's resourceVersion, re-watches after a
 * clean end, relists on 410 and backs off on errors; the Indexer answers "which pods run on node X" without
 * a request. Run: `node --experimental-strip-types examples/src/reflector-indexer.ts [node-name]`.
 */
import { Indexer, listWatchFor, Reflector, type ReflectorStore } from '@kubeloop/cache';
import { type ApiClient, newClient, type ObjectOf, Pod } from '@kubeloop/client';
import { getConfig } from '@kubeloop/config';

/** The object type of the `Pod` kind descriptor (client-node's `PodObject`), read off the descriptor. */
export type PodObject = ObjectOf<typeof Pod>;

/** The name of the index from node name (`spec.nodeName`) to the pods scheduled there. */
export const BY_NODE = 'byNode';

/** A running Reflector into an Indexer of pods indexed by node; `stop()` ends it. */
export interface PodIndex {
  readonly indexer: Indexer<PodObject>;
  readonly reflector: Reflector<PodObject>;
  /** Resolves once the first list is in the store (the Reflector's lastSyncResourceVersion is set). */
  synced(): Promise<void>;
  /** Aborts the Reflector and waits for it to return. */
  stop(): Promise<void>;
}

/** Starts a Reflector for the pods of `namespace` (all namespaces when absent) into an Indexer with {@link BY_NODE}. */
export function startPodIndex(client: ApiClient, namespace?: string): PodIndex {
  const indexer = new Indexer<PodObject>({
    indexers: { [BY_NODE]: (pod) => (pod.spec?.nodeName ? [pod.spec.nodeName] : []) },
  });
  // The Reflector writes list results and watch events to a ReflectorStore; an informer puts a RealFIFO and
  // its handlers in between, here the Indexer is written directly (client-go's NewReflector with a Store).
  const store: ReflectorStore<PodObject> = {
    replace: (items) => indexer.replace(items),
    add: (pod) => void indexer.upsert(pod),
    update: (pod) => void indexer.upsert(pod),
    delete: (pod) => void indexer.deleteKey(indexer.keyFunc(pod)),
  };
  const reflector = new Reflector(listWatchFor(client, Pod, namespace ? { namespace } : {}), store, {
    name: 'pods-by-node',
  });
  const ac = new AbortController();
  const running = reflector.run(ac.signal);
  return {
    indexer,
    reflector,
    async synced() {
      while (reflector.lastSyncResourceVersion === '') {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async stop() {
      ac.abort();
      await running.catch(() => undefined);
    },
  };
}

async function main(): Promise<void> {
  const node = process.argv[2] ?? 'node-1';
  const client = newClient(getConfig());
  const index = startPodIndex(client);
  await index.synced();
  for (const pod of index.indexer.byIndex(BY_NODE, node))
    console.log(`${pod.metadata?.namespace}/${pod.metadata?.name}`);
  await index.stop();
  await client.close();
}

if (process.argv[1] === new URL(import.meta.url).pathname) await main();
