import type { InformerCache } from '@kubeloop/cache';
import type { RequestHandler } from '../healthz/http-server.js';

/** The path the manager's metrics server serves {@link debugCacheHandler} on. */
export const DEBUG_CACHE_PATH = '/debug/cache';

/** A member cluster's cache, for {@link debugCacheHandler} (a multi-cluster manager's engaged clusters). */
export interface MemberCache {
  readonly cluster: string;
  readonly cache: InformerCache;
}

/**
 * `GET /debug/cache`: the manager cache as JSON — `{ informers: [...], readYourWrites }`, one entry per informer
 * (`name`, `group`, `version`, `kind`, `metadataOnly`, `namespaces`, `synced`, `started`, `stopped`,
 * `lastListError`, `stats`: objects, bytes, last event age, relists, watch restarts, events by type, handler
 * time) and the read-your-own-writes counters (`null` when off). The informers of `members()` (a multi-cluster
 * manager's engaged clusters, read at each request) follow the manager's own, each with `cluster` naming its
 * cluster. Served on the metrics server, so it is exposed exactly where `/metrics` is (and behind the same
 * protection). Objects themselves are never listed.
 */
export function debugCacheHandler(
  cache: InformerCache,
  members: () => readonly MemberCache[] = () => [],
): RequestHandler {
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
      res.end('method not allowed\n');
      return;
    }
    const body = JSON.stringify(
      {
        informers: [
          ...cache.informers(),
          ...members().flatMap((m) => m.cache.informers().map((i) => ({ cluster: m.cluster, ...i }))),
        ],
        readYourWrites: cache.readYourWrites()?.stats() ?? null,
      },
      null,
      2,
    );
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}
