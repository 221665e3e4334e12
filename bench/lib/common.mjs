// Helpers shared by the scenario suites: knobs, clocks, percentiles, and the informer implementations
// compared side by side (raw limit, kubeloop variants, @kubernetes/client-node). Implementations are loaded
// with dynamic imports inside the task process, so each process carries only its own stack.
import { readdirSync, readFileSync } from 'node:fs';

/** BENCH_SMOKE=1: every scenario at a tiny size (the `npm test` smoke test); timings are meaningless then. */
export const SMOKE = process.env.BENCH_SMOKE === '1';

/** A positive integer knob from the environment (`dflt` normally, `smoke` under BENCH_SMOKE). */
export function knob(name, dflt, smoke = dflt) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return SMOKE ? smoke : dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return n;
}

export const gc = typeof globalThis.gc === 'function' ? globalThis.gc : () => {};
export const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
/**
 * CPU time of this process split by thread, ms (Linux `/proc/self/task/<tid>/stat`, 10 ms ticks): `main` is the
 * JavaScript thread (its tid is the pid), `others` every other thread — V8's GC and compiler helpers, libuv's
 * pool. `process.cpuUsage()` is their sum; the split says whether a contender's CPU is its own JavaScript or
 * concurrent GC work. `null` where /proc is not there.
 */
export function threadCpuMs() {
  try {
    let main = 0;
    let others = 0;
    for (const tid of readdirSync('/proc/self/task')) {
      let stat;
      try {
        stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      } catch {
        continue; // the thread ended meanwhile
      }
      // fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = ((Number(f[11]) + Number(f[12])) * 1000) / 100;
      if (Number(tid) === process.pid) main += ms;
      else others += ms;
    }
    return { main, others };
  } catch {
    return null;
  }
}
export const round = (x, d = 1) => (Number.isFinite(x) ? Number(x.toFixed(d)) : null);
/** ms since the epoch, sub-ms; comparable with the replay server's stamps (same machine). */
export const nowMs = () => performance.timeOrigin + performance.now();
/** Heap plus ArrayBuffer memory (Buffers live outside the JS heap but are memory the cache keeps). */
export const retainedNow = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
/** Peak resident set of this process so far, bytes. */
export const peakRss = () => process.resourceUsage().maxRSS * 1024;

/** Value at quantile q (0..1) of a numeric array (sorted copy, nearest rank). */
export function quantile(xs, q) {
  if (xs.length === 0) return null;
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}

/** Resolves (with the time) when `cond()` holds at a `poke()`; rejects after `ms`. */
export function waiter(cond, ms, what) {
  let poke = () => {};
  const done = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bench: timed out waiting for ${what}`)), ms);
    poke = () => {
      if (cond()) {
        clearTimeout(timer);
        resolve(performance.now());
      }
    };
  });
  return { done, poke: () => poke() };
}

/** The medians (or the line itself) of one result. */
export function metricsOf(results, scenario, impl) {
  const r = results.find((x) => x.scenario === scenario && x.impl === impl);
  return r ? (r.medians ?? r) : undefined;
}
export const ratio = (a, b) => (a > 0 && b > 0 ? round(a / b, 3) : null);

export const RAW = 'raw-limit';
export const KUBELOOP = 'kubeloop';
export const KUBELOOP_STRIP = 'kubeloop-strip-managed-fields';
export const KUBELOOP_COMPACT = 'kubeloop-compact-store';
/** The compact store without a transform: the same objects as the default, kept as JSON bytes (the lazy-objects row). */
export const KUBELOOP_COMPACT_FULL = 'kubeloop-compact-store-no-strip';
export const KUBELOOP_WATCHLIST = 'kubeloop-watchlist';
/**
 * kubeloop with `objectRetention: 'bytes'`: each object kept as the JSON text the client received (list items cut
 * from the reply, watch objects sliced from the event line), parsed and frozen on read through a hot set of 1,000.
 */
export const KUBELOOP_LAZY = 'kubeloop-lazy';
export const KUBELOOP_UNFROZEN = 'kubeloop-unfrozen';
/** kubeloop with the list body read as one string then `JSON.parse` (`listDecoding: 'whole'`, the earlier path). */
export const KUBELOOP_WHOLE = 'kubeloop-whole-list-decode';
/** kubeloop with `disableCompression: true` (no gzip'd replies: on loopback, compressing costs both ends). */
export const KUBELOOP_NO_GZIP = 'kubeloop-no-gzip';
/**
 * kubeloop as the default, in a process whose V8 young generation may grow to 64 MiB per semi-space
 * (`--max-semi-space-size=64`, Node's default is 16 on 64-bit): fewer scavenges while a list is decoded, so
 * fewer copies of objects that are about to be stored. A deployment setting (NODE_OPTIONS), not library code.
 */
export const KUBELOOP_SEMI_SPACE = 'kubeloop-semi-space-64';
/** The Node flags of a contender, beyond the bench's own (`run.mjs` passes them to its process). */
export const NODE_ARGS = { [KUBELOOP_SEMI_SPACE]: ['--max-semi-space-size=64'] };
export const CLIENT_NODE = '@kubernetes/client-node-informer';

/** Reads the replay server's kubeconfig (JSON) for the raw client: server URL, CA, token. */
function replayTarget(kubeconfig) {
  const kc = JSON.parse(readFileSync(kubeconfig, 'utf8'));
  const cluster = kc.clusters[0].cluster;
  return {
    url: cluster.server,
    ca: Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8'),
    token: kc.users[0].user.token,
  };
}

const NEWLINE = 0x0a;

/**
 * The raw limit: undici → for lists, `JSON.parse` of each page and `Map.set` of its items (paged, limit
 * 500); for the watch, split the byte stream on newlines → `JSON.parse` → `Map.set`. Nothing else: no
 * type checks, no freezing, no indexes, no handler fan-out beyond one counting callback.
 * With `scope.namespace` (the real server) it lists and watches that namespace, and its first list asks for
 * `resourceVersion=0` as the informers' does (kube-apiserver then answers from its watch cache, in one piece).
 */
async function rawImpl(kubeconfig, scope = {}) {
  const { Agent, request } = await import('undici');
  const real = scope.namespace !== undefined;
  const { url, ca, token } = real
    ? await (await import('./real-server.mjs')).targetOf(kubeconfig)
    : replayTarget(kubeconfig);
  const base = real ? `${url}/api/v1/namespaces/${scope.namespace}/pods` : `${url}/api/v1/pods`;
  const dispatcher = new Agent({ connect: { ca } });
  const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };
  const map = new Map();
  const ac = new AbortController();
  let watching;
  return {
    store: map,
    async start(onAdd, onUpdate) {
      let cont = '';
      let rv = '';
      do {
        const q = cont
          ? `limit=500&continue=${encodeURIComponent(cont)}`
          : real
            ? 'resourceVersion=0&limit=500'
            : 'limit=500';
        const res = await request(`${base}?${q}`, { dispatcher, headers });
        const text = await res.body.text();
        if (res.statusCode !== 200) throw new Error(`raw list: HTTP ${res.statusCode} ${text.slice(0, 300)}`);
        const page = JSON.parse(text);
        for (const item of page.items) {
          map.set(`${item.metadata.namespace}/${item.metadata.name}`, item);
          onAdd();
        }
        rv = page.metadata.resourceVersion;
        cont = page.metadata.continue ?? '';
      } while (cont);
      watching = (async () => {
        const res = await request(`${base}?watch=true&resourceVersion=${rv}`, {
          dispatcher,
          headers,
          signal: ac.signal,
        });
        let pending = [];
        let pendingBytes = 0;
        for await (const buf of res.body) {
          let start = 0;
          let nl = buf.indexOf(NEWLINE);
          while (nl >= 0) {
            let line;
            if (pendingBytes > 0) {
              pending.push(buf.subarray(0, nl));
              line = Buffer.concat(pending, pendingBytes + nl).toString('utf8');
              pending = [];
              pendingBytes = 0;
            } else line = buf.toString('utf8', start, nl);
            const ev = JSON.parse(line);
            const o = ev.object;
            map.set(`${o.metadata.namespace}/${o.metadata.name}`, o);
            onUpdate(o);
            start = nl + 1;
            nl = buf.indexOf(NEWLINE, start);
          }
          if (start < buf.length) {
            pending.push(buf.subarray(start));
            pendingBytes += buf.length - start;
          }
        }
      })().catch((err) => {
        if (!ac.signal.aborted) process.stderr.write(`raw watch: ${err}\n`);
      });
    },
    count: () => map.size,
    async stop() {
      ac.abort();
      await watching;
      await dispatcher.close();
    },
  };
}

/** Drops `metadata.managedFields` (the cache package's own transform when it has one). */
async function stripManagedFieldsTransform() {
  const cache = await import('@kubeloop/cache');
  if (typeof cache.stripManagedFields === 'function') return { fn: cache.stripManagedFields, own: true };
  return {
    fn: (o) => {
      if (o.metadata?.managedFields) o.metadata.managedFields = undefined;
      return o;
    },
    own: false,
  };
}

/** Whether this build of SharedIndexInformer takes the `compactStore` option. */
export async function compactStoreSupported() {
  const { SharedIndexInformer, CompactIndexer } = await import('@kubeloop/cache');
  if (!CompactIndexer) return false;
  const lw = {
    list: async () => ({ metadata: {}, items: [] }),
    watch: () => ({ async *[Symbol.asyncIterator]() {} }),
  };
  try {
    return new SharedIndexInformer(lw, { compactStore: true }).getIndexer() instanceof CompactIndexer;
  } catch {
    return false;
  }
}

/**
 * A kubeloop SharedIndexInformer over `listWatchFor(newClient(config), Pod)`, with client-side throttling off
 * (`qps: -1`; client-node has none). `variant`: '' (default), 'strip', 'compact', 'compactfull' (compact store, no transform), 'lazy' (`objectRetention: 'bytes'`), 'watchlist', 'unfrozen',
 * 'whole' (list bodies read as one string, `listDecoding: 'whole'`), 'nogzip' (`disableCompression: true`).
 * `scope.namespace`: cache that namespace only (the real server).
 */
async function kubeloopImpl(kubeconfig, variant, scope = {}) {
  const { loadRestConfig } = await import('@kubeloop/config');
  const { newClient, Pod } = await import('@kubeloop/client');
  const { SharedIndexInformer, listWatchFor } = await import('@kubeloop/cache');
  const config = {
    ...loadRestConfig({ kubeconfig, env: {}, argv: [] }),
    qps: -1,
    ...(variant === 'nogzip' ? { disableCompression: true } : {}),
  };
  const client = newClient(config, variant === 'whole' ? { listDecoding: 'whole' } : {});
  const ac = new AbortController();
  const options = {};
  let transformIsOwn = null;
  if (variant === 'strip' || variant === 'compact') {
    const t = await stripManagedFieldsTransform();
    options.transform = t.fn;
    transformIsOwn = t.own;
  }
  if (variant === 'compact' || variant === 'compactfull') options.compactStore = { maxCachedObjects: 1000 };
  if (variant === 'watchlist') options.reflector = { useWatchList: true };
  if (variant === 'lazy') options.objectRetention = 'bytes';
  if (variant === 'unfrozen') options.freezeObjects = false;
  let informer;
  let running;
  return {
    notes: { ...(transformIsOwn === null ? {} : { transformFromCache: transformIsOwn }) },
    get store() {
      return informer?.getIndexer();
    },
    async start(onAdd, onUpdate) {
      informer = new SharedIndexInformer(listWatchFor(client, Pod, scope), options);
      informer.addEventHandler({ onAdd: () => onAdd(), onUpdate: (_o, n) => onUpdate(n) });
      running = informer.run(ac.signal);
      running.catch(() => {});
      if (!(await informer.waitForSync())) throw new Error('kubeloop informer did not sync');
    },
    count: () => informer?.getIndexer().size() ?? 0,
    async stop() {
      ac.abort();
      await running;
      await client.close();
    },
  };
}

/**
 * @kubernetes/client-node's `makeInformer` over `listPodForAllNamespaces` (one unpaged list, then watch), or
 * `listNamespacedPod` with `scope.namespace`.
 */
async function clientNodeImpl(kubeconfig, scope = {}) {
  const k8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  let informer;
  let stopping = false;
  return {
    get store() {
      return informer;
    },
    async start(onAdd, onUpdate) {
      const ns = scope.namespace;
      informer =
        ns === undefined
          ? k8s.makeInformer(kc, '/api/v1/pods', () => core.listPodForAllNamespaces())
          : k8s.makeInformer(kc, `/api/v1/namespaces/${ns}/pods`, () =>
              core.listNamespacedPod({ namespace: ns }),
            );
      informer.on('add', () => onAdd());
      informer.on('update', (o) => onUpdate(o));
      informer.on('error', (err) => {
        if (!stopping) process.stderr.write(`client-node informer error: ${String(err)}\n`);
      });
      await informer.start();
    },
    count: () => informer?.list().length ?? 0,
    async stop() {
      stopping = true;
      await informer?.stop();
    },
  };
}

/** The informer implementations by result name; `scope` ({ namespace }) on the real server. */
export const INFORMERS = {
  [RAW]: (kc, scope) => rawImpl(kc, scope),
  [KUBELOOP]: (kc, scope) => kubeloopImpl(kc, '', scope),
  [KUBELOOP_STRIP]: (kc, scope) => kubeloopImpl(kc, 'strip', scope),
  [KUBELOOP_COMPACT]: (kc, scope) => kubeloopImpl(kc, 'compact', scope),
  [KUBELOOP_COMPACT_FULL]: (kc, scope) => kubeloopImpl(kc, 'compactfull', scope),
  [KUBELOOP_WATCHLIST]: (kc, scope) => kubeloopImpl(kc, 'watchlist', scope),
  [KUBELOOP_LAZY]: (kc, scope) => kubeloopImpl(kc, 'lazy', scope),
  [KUBELOOP_UNFROZEN]: (kc, scope) => kubeloopImpl(kc, 'unfrozen', scope),
  [KUBELOOP_WHOLE]: (kc, scope) => kubeloopImpl(kc, 'whole', scope),
  [KUBELOOP_NO_GZIP]: (kc, scope) => kubeloopImpl(kc, 'nogzip', scope),
  [KUBELOOP_SEMI_SPACE]: (kc, scope) => kubeloopImpl(kc, '', scope),
  [CLIENT_NODE]: (kc, scope) => clientNodeImpl(kc, scope),
};

/**
 * Where a task process's informer points: the replay server the suite's setup() started, or (`--server real`)
 * the real server's kubeconfig and the bench's namespace there, with what setup() filled it with.
 */
export function benchTarget() {
  if (process.env.BENCH_SERVER === 'real') {
    const kubeconfig = process.env.BENCH_KUBECONFIG || process.env.KUBECONFIG;
    const namespace = process.env.BENCH_REAL_NAMESPACE || 'bench-real';
    if (!kubeconfig || !process.env.BENCH_REAL_OBJECTS)
      throw new Error('bench: run through run.mjs --server real (setup() fills the namespace)');
    return {
      real: true,
      kubeconfig,
      scope: { namespace },
      objects: Number(process.env.BENCH_REAL_OBJECTS),
      podBytes: Number(process.env.BENCH_REAL_POD_BYTES),
      watchEvents: Number(process.env.BENCH_REAL_WATCH_EVENTS ?? 0),
    };
  }
  return { real: false, scope: undefined, ...replayEnv() };
}

/**
 * setup() for a suite on the real server: fills the bench's namespace with `objects` realistic pods (kept
 * for the next size or suite; run.mjs deletes them at the end) and builds the client-go contender when it can.
 */
export async function realSetup({ objects, watchEvents = 0 }) {
  const { ensureRealPods, realKubeconfig, realNamespace } = await import('./real-server.mjs');
  const kubeconfig = realKubeconfig();
  const namespace = realNamespace();
  const { podBytes } = await ensureRealPods(kubeconfig, namespace, objects);
  process.stderr.write(
    `real server: ${objects} realistic pods in ${namespace} (${(podBytes / 1000).toFixed(1)} KB each as served)\n`,
  );
  return {
    env: {
      BENCH_KUBECONFIG: kubeconfig,
      BENCH_REAL_NAMESPACE: namespace,
      BENCH_REAL_OBJECTS: String(objects),
      BENCH_REAL_POD_BYTES: String(podBytes),
      BENCH_REAL_WATCH_EVENTS: String(watchEvents),
      ...(await clientGoEnv(kubeconfig)),
    },
  };
}

/** BENCH_CLIENT_GO_BIN for the task processes when the client-go contender can be built here (else {}). */
export async function clientGoEnv(kubeconfig) {
  const { buildClientGo, clientGoAvailability, warnNoClientGo } = await import('./client-go.mjs');
  const a = clientGoAvailability(kubeconfig);
  if (!a.go) {
    warnNoClientGo(a.reason);
    return {};
  }
  return { BENCH_CLIENT_GO_BIN: await buildClientGo(a) };
}

/** The client-go contender's flags for the task's target (namespace on the real server). */
export function clientGoArgs(target, extra = []) {
  return [
    '-kubeconfig',
    target.kubeconfig,
    ...(target.scope?.namespace ? ['-namespace', target.scope.namespace] : []),
    '-objects',
    String(target.objects),
    ...extra,
  ];
}

/** The replay server a suite's setup() started, as its task processes see it. */
export function replayEnv() {
  const kubeconfig = process.env.BENCH_REPLAY_KUBECONFIG;
  const url = process.env.BENCH_REPLAY_URL;
  if (!kubeconfig || !url) throw new Error('bench: run through run.mjs (setup() starts the replay server)');
  return {
    kubeconfig,
    url,
    objects: Number(process.env.BENCH_REPLAY_OBJECTS),
    podBytes: Number(process.env.BENCH_REPLAY_POD_BYTES),
    watchEvents: Number(process.env.BENCH_REPLAY_WATCH_EVENTS ?? 0),
  };
}

/** setup() for a suite on the replay server: starts it in the runner's parent and exports its address. */
export async function replaySetup(options) {
  const { startReplayServer } = await import('./replay-server.mjs');
  const t0 = performance.now();
  const server = await startReplayServer(options);
  process.stderr.write(
    `replay server: ${options.objects} ${options.shape ?? 'realistic'} pods (${(server.podBytes / 1e6).toFixed(1)} MB JSON), ${options.watchEvents ?? 0} watch events, ready in ${Math.round(performance.now() - t0)} ms\n`,
  );
  return {
    server,
    env: {
      BENCH_REPLAY_KUBECONFIG: server.kubeconfigPath,
      BENCH_REPLAY_URL: server.url,
      BENCH_REPLAY_OBJECTS: String(options.objects),
      BENCH_REPLAY_POD_BYTES: String(server.podBytes),
      BENCH_REPLAY_WATCH_EVENTS: String(options.watchEvents ?? 0),
    },
    teardown: () => server.close(),
  };
}

/** Fetches the replay server's request log (control endpoint) from a task process. */
export async function replayLog(url, reset = false) {
  const { Agent, request } = await import('undici');
  const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
  try {
    const res = await request(`${url}/_bench/log${reset ? '/reset' : ''}`, {
      dispatcher,
      method: reset ? 'POST' : 'GET',
    });
    return JSON.parse(await res.body.text());
  } finally {
    await dispatcher.close();
  }
}
