// h2-watches (envtest, which serves h2 and HTTP/1.1 on one port): W watches of ConfigMaps held open by one
// kubeloop client — over HTTP/2 (`transport: { http2: true }`: every watch a stream of one connection) vs
// HTTP/1.1 (the default: one connection per open watch). Measured in the client process: TCP sockets it holds
// once every watch is open, RSS growth from opening them (and peak RSS), and the latency of E changes written
// one after the other (each stamped with its write time by a second, HTTP/1.1 client of the same process, so
// no clocks of two processes are compared) from the write's start to each watch's receipt: p50/p99/max over
// W × E deliveries.
// Knobs: H2_WATCHES (default 100), H2_EVENTS (default 50), H2_GAP_MS (pause between writes, default 20).
import { gc, knob, quantile, round, SMOKE } from '../lib/common.mjs';

const WATCHES = knob('H2_WATCHES', 100, 5);
const EVENTS = knob('H2_EVENTS', 50, 3);
const GAP_MS = knob('H2_GAP_MS', 20, 1);
const NAMESPACE = 'h2-bench';
const NAME = 'stamp';
const SCENARIO = `h2-watches ${WATCHES} watches, ${EVENTS} changes`;
const H2 = 'kubeloop-http2';
const H1 = 'kubeloop-http1.1';

/** Sockets (TCP handles, TLS or not) this process holds right now. */
const sockets = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;
const rss = () => process.memoryUsage().rss;
const now = () => performance.now();

function task(impl) {
  return {
    scenario: SCENARIO,
    impl,
    measure: async () => {
      const kubeconfig = process.env.BENCH_H2_KUBECONFIG;
      if (!kubeconfig) throw new Error('h2-watches: run through run.mjs (setup() starts envtest)');
      const { loadRestConfig } = await import('@kubeloop/config');
      const { newClient, ConfigMap } = await import('@kubeloop/client');
      const config = { ...loadRestConfig({ kubeconfig, env: {}, argv: [] }), qps: -1 };
      const key = { namespace: NAMESPACE, name: NAME };
      /** One write with a short-lived HTTP/1.1 client, closed before sockets are counted. */
      const writeOnce = async (stamp) => {
        const w = newClient(config);
        await w.patch(ConfigMap, key, { type: 'merge', data: { data: { stamp } } });
        await w.close();
      };
      const first = newClient(config);
      const start = await first.get(ConfigMap, key);
      await first.close();
      const watcher = newClient(config, { transport: { http2: impl === H2 } });
      gc();
      const sockets0 = sockets();
      const rss0 = rss();
      const mem0 = process.memoryUsage();
      const ac = new AbortController();
      /** stamp → write start (ms, this process's clock) */
      const sentAt = new Map();
      const latencies = [];
      let opened = 0;
      let received = 0;
      let onProgress = () => {};
      const loops = [];
      for (let w = 0; w < WATCHES; w++) {
        loops.push(
          (async () => {
            const events = watcher.watch(ConfigMap, {
              namespace: NAMESPACE,
              resourceVersion: start.metadata.resourceVersion,
              signal: ac.signal,
            });
            const it = events[Symbol.asyncIterator]();
            // a bookmark-less watch has no "open" event: the first next() sends the request; count it open once
            // the response started, which the client reports by yielding or by the server's first byte
            const next = it.next();
            opened++;
            onProgress();
            for (let r = await next; !r.done; r = await it.next()) {
              const stamp = r.value.object?.data?.stamp;
              const t0 = sentAt.get(stamp);
              if (t0 === undefined) continue;
              latencies.push(now() - t0);
              received++;
              onProgress();
            }
          })().catch((err) => {
            if (!ac.signal.aborted) throw err;
          }),
        );
      }
      const until = (cond, what, ms = 120_000) =>
        new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`h2-watches: timed out waiting for ${what}`)), ms);
          onProgress = () => {
            if (cond()) {
              clearTimeout(timer);
              onProgress = () => {};
              resolve(undefined);
            }
          };
          onProgress();
        });
      await until(() => opened === WATCHES, 'the watches to start');
      // the requests are sent; wait until the server has every watch registered: a write seen by all of them
      const warm = `warm-${Date.now()}`;
      sentAt.set(warm, now());
      await writeOnce(warm);
      await until(() => received === WATCHES, 'every watch to see the first change');
      const socketsOpen = sockets() - sockets0; // the watcher's alone: every writer so far is closed
      const rssOpen = rss() - rss0;
      // what the RSS growth is made of: the JS heap V8 reserved, memory outside it (Buffers, native session state)
      gc();
      const mem1 = process.memoryUsage();
      const writer = newClient(config); // HTTP/1.1, one keep-alive connection for the sequential writes
      latencies.length = 0;
      received = 0;
      const t0 = now();
      for (let e = 0; e < EVENTS; e++) {
        const stamp = `e${e}-${Date.now()}`;
        sentAt.set(stamp, now());
        await writer.patch(ConfigMap, key, { type: 'merge', data: { data: { stamp } } });
        if (GAP_MS > 1) await new Promise((r) => setTimeout(r, GAP_MS));
      }
      await until(() => received === WATCHES * EVENTS, `${WATCHES * EVENTS} deliveries`);
      const wall = now() - t0;
      const peak = process.resourceUsage().maxRSS * 1024;
      ac.abort();
      await Promise.all(loops);
      await watcher.close();
      await writer.close();
      return {
        opsPerSec: Math.round((received / wall) * 1000),
        watches: WATCHES,
        changes: EVENTS,
        deliveries: received,
        socketsOpen,
        rssGrowthBytes: rssOpen,
        heapTotalGrowthBytes: mem1.heapTotal - mem0.heapTotal,
        heapUsedGrowthBytes: mem1.heapUsed - mem0.heapUsed,
        externalGrowthBytes: mem1.external - mem0.external,
        peakRssBytes: peak,
        p50Ms: round(quantile(latencies, 0.5), 2),
        p99Ms: round(quantile(latencies, 0.99), 2),
        maxMs: round(quantile(latencies, 1), 2),
      };
    },
  };
}

/** Runs in the runner's parent: envtest (h2 + HTTP/1.1) with one namespace and the ConfigMap every watch sees. */
export async function setup() {
  const { Environment } = await import('@kubeloop/envtest');
  const env = new Environment();
  await env.start();
  const server = env.server;
  if (!server || !env.kubeconfigPath)
    throw new Error('h2-watches: envtest did not start an in-process server');
  const namespaces = server.resources.lookup('', 'v1', 'namespaces');
  const configmaps = server.resources.lookup('', 'v1', 'configmaps');
  if (!namespaces || !configmaps) throw new Error('h2-watches: envtest serves no namespaces/configmaps');
  const opts = { fieldManager: 'bench' };
  server.registry.create(
    namespaces,
    undefined,
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
    opts,
  );
  server.registry.create(
    configmaps,
    NAMESPACE,
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: NAME, namespace: NAMESPACE },
      data: { stamp: '' },
    },
    opts,
  );
  return { env: { BENCH_H2_KUBECONFIG: env.kubeconfigPath }, teardown: () => env.stop() };
}

export function tasks() {
  return [task(H1), task(H2)];
}

/** HTTP/2 ÷ HTTP/1.1: sockets, RSS growth, p99 latency (context figures, not targets). */
export function summary(results) {
  const get = (impl) => {
    const r = results.find((x) => x.scenario === SCENARIO && x.impl === impl);
    return r ? (r.medians ?? r) : undefined;
  };
  const h1 = get(H1);
  const h2 = get(H2);
  if (!h1 || !h2) return [];
  const div = (a, b) => (b > 0 ? round(a / b, 3) : null);
  return [
    {
      scenario: SCENARIO,
      impl: `${H2} vs ${H1}`,
      ratio: div(h2.p99Ms, h1.p99Ms),
      ratioOf: 'event latency p99, HTTP/2 ÷ HTTP/1.1',
      ratios: {
        socketsOpen: div(h2.socketsOpen, h1.socketsOpen),
        rssGrowthBytes: div(h2.rssGrowthBytes, h1.rssGrowthBytes),
        p50Ms: div(h2.p50Ms, h1.p50Ms),
      },
      smoke: SMOKE,
    },
  ];
}
