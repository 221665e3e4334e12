/**
 * The work queue alone (`@kubeloop/workqueue`, no Kubernetes at all): client-go's rate-limited queue for any
 * keyed background work. A key is never handed to two workers at once, duplicates added while a key waits
 * collapse into one, a key added while it is processed comes back after `done`, and a failed key is retried
 * with per-item exponential backoff (5 ms doubling, capped at 1000 s) combined with an overall 10 qps / 100
 * burst bucket. Run: `node --experimental-strip-types examples/src/workqueue.ts`.
 */
import { newRateLimitingQueue } from '@kubeloop/workqueue';

/**
 * Processes `keys` with `workers` concurrent workers; `work(key)` throwing retries the key rate-limited, up
 * to `maxRetries` times, then drops it (as controller-runtime does after its own retry budget). Resolves with
 * the keys that succeeded and the keys dropped, once every key has been settled.
 */
export async function processAll(
  keys: readonly string[],
  work: (key: string) => Promise<void>,
  options: { workers?: number; maxRetries?: number } = {},
): Promise<{ done: string[]; dropped: string[] }> {
  const queue = newRateLimitingQueue<string>({ name: 'example' });
  const pending = new Set(keys);
  const done: string[] = [];
  const dropped: string[] = [];
  for (const key of keys) queue.add(key);

  const worker = async (): Promise<void> => {
    for (;;) {
      const { item, shutdown } = await queue.get();
      if (shutdown) return;
      try {
        await work(item);
        queue.forget(item); // success: reset the key's backoff
        done.push(item);
        pending.delete(item);
      } catch {
        if (queue.numRequeues(item) < (options.maxRetries ?? 5)) {
          queue.addRateLimited(item); // retry after the key's backoff
        } else {
          queue.forget(item);
          dropped.push(item);
          pending.delete(item);
        }
      } finally {
        queue.done(item);
      }
      if (pending.size === 0) queue.shutDown();
    }
  };
  await Promise.all(Array.from({ length: options.workers ?? 2 }, worker));
  return { done, dropped };
}

async function main(): Promise<void> {
  let flaky = 0;
  const result = await processAll(['a', 'b', 'c'], async (key) => {
    if (key === 'b' && flaky++ < 2) throw new Error('transient');
  });
  console.log('done', result.done.join(','), 'dropped', result.dropped.join(','));
}

if (process.argv[1] === new URL(import.meta.url).pathname) await main();
