/**
 * A pod watcher with the client alone (`@kubeloop/config` + `@kubeloop/client`, no cache, no builder):
 * list the pods of a namespace, then watch from the list's resourceVersion, as client-go's
 * `ListWatch` does by hand. Run: `node --experimental-strip-types examples/src/pod-watcher.ts [namespace]`
 * with a kubeconfig (or `KUBECONFIG`) pointing at a cluster.
 */
import { type ApiClient, newClient, Pod, type WatchEvent } from '@kubeloop/client';
import { getConfig } from '@kubeloop/config';

/** What one watch event did to one pod, as the watcher prints it: `ADDED default/web-0 Pending`. */
export interface PodChange {
  readonly type: WatchEvent['type'];
  readonly name: string;
  readonly phase: string;
}

/**
 * Lists the pods of `namespace`, then watches them from the list's resourceVersion (no event between the
 * two is lost) and calls `onChange` for each ADDED / MODIFIED / DELETED event until `signal` aborts.
 * A watch the server ends cleanly is resumed from the last resourceVersion seen; an ERROR event (e.g. 410
 * Expired) makes it list again — what a Reflector does for you (see reflector-indexer.ts).
 */
export async function watchPods(
  client: ApiClient,
  namespace: string,
  onChange: (change: PodChange) => void,
  signal: AbortSignal,
): Promise<void> {
  while (!signal.aborted) {
    const list = await client.list(Pod, { namespace, signal });
    let resourceVersion = list.metadata.resourceVersion;
    for (const pod of list.items)
      onChange({ type: 'ADDED', name: pod.metadata?.name ?? '', phase: pod.status?.phase ?? '' });
    let expired = false;
    try {
      while (!signal.aborted && !expired) {
        for await (const event of client.watch(Pod, {
          namespace,
          resourceVersion,
          allowWatchBookmarks: true,
          signal,
        })) {
          if (event.type === 'ERROR') {
            expired = true; // 410 Gone / Expired: our resourceVersion is too old, list again
            break;
          }
          resourceVersion = event.object.metadata?.resourceVersion ?? resourceVersion;
          if (event.type === 'BOOKMARK') continue;
          onChange({
            type: event.type,
            name: event.object.metadata?.name ?? '',
            phase: event.object.status?.phase ?? '',
          });
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    }
  }
}

async function main(): Promise<void> {
  const namespace = process.argv[2] ?? 'default';
  const client = newClient(getConfig());
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  try {
    await watchPods(
      client,
      namespace,
      (c) => console.log(c.type, `${namespace}/${c.name}`, c.phase),
      stop.signal,
    );
  } finally {
    await client.close();
  }
}

if (process.argv[1] === new URL(import.meta.url).pathname) await main();
