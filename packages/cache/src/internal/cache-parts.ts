// What an informer cache builds once from its options and shares among its informers.
import { CacheOptionsError } from '../cache-errors.js';
import type { InformerCacheOptions } from '../cache-options.js';
import { ReadYourWrites } from '../read-your-writes.js';
import { WatchListSupport } from '../watch-list-support.js';

/** The cache's one `WatchListSupport` (what the server said about streaming lists): the given one, or a new one. */
export function watchListSupportOf(options: InformerCacheOptions): WatchListSupport {
  return (
    options.reflector?.watchListSupport ??
    new WatchListSupport({
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.watchListReprobeIntervalMs !== undefined
        ? { reprobeIntervalMs: options.watchListReprobeIntervalMs }
        : {}),
    })
  );
}

/**
 * The read-your-own-writes tracker, or `undefined` when `readYourWrites` is off.
 * @throws CacheOptionsError for invalid `readYourWrites` options (the tracker's error as cause).
 */
export function readYourWritesOf(options: InformerCacheOptions): ReadYourWrites | undefined {
  const ryow = options.readYourWrites;
  if (!ryow) return undefined;
  try {
    return new ReadYourWrites({
      ...(typeof ryow === 'object' ? ryow : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    });
  } catch (err) {
    throw new CacheOptionsError((err as Error).message, { cause: err });
  }
}
