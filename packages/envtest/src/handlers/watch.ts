/** watch: a chunked stream of events (see ../watch.ts for the stream itself). */
import { methodNotSupported } from '../errors.js';
import { negotiate } from '../http.js';
import { serveWatch } from '../watch.js';
import { prepareWatch } from '../watch-options.js';
import type { ResourceRequest } from './context.js';

/** watch: validate, then serve the stream until it ends. */
export async function handleWatch(r: ResourceRequest): Promise<void> {
  const { env, rt, ctx, req, res, q, ns, sub } = r;
  const { registry } = r.env;
  if (sub !== undefined) throw methodNotSupported(rt.resource, rt.group, 'watch');
  const fmt = negotiate(String(req.headers.accept ?? ''), { table: true, partial: true });
  const wopts = {
    rt,
    ...(ns !== undefined ? { namespace: ns } : {}),
    query: q,
    encoding:
      fmt.kind === 'table'
        ? ('table' as const)
        : fmt.kind === 'partial'
          ? ('partial' as const)
          : ('json' as const),
    bookmarkIntervalMs: env.bookmarkIntervalMs,
    defaultTimeoutMs: env.defaultWatchTimeoutMs,
    ...(env.clock !== undefined ? { clock: env.clock } : {}),
    ...(env.watchBufferBytes !== undefined ? { maxBufferedBytes: env.watchBufferBytes } : {}),
  };
  const prepared = prepareWatch(registry, wopts);
  await serveWatch(registry, wopts, prepared, ctx, res, env.faults, env.watches);
  return;
}
