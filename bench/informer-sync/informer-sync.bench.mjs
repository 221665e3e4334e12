// informer-sync (replay server): time from start to synced for an informer over N realistic pods (paged lists of
// 500, pre-encoded), client CPU, retained memory after GC, and peak RSS — kubeloop (default, with
// stripManagedFields, with the compact store, with WatchList) vs @kubernetes/client-node's makeInformer vs the raw
// limit, and client-go's SharedInformerFactory (bench/client-go/main.go) when Go and a Kubernetes tree are here.
// Knobs: SYNC_OBJECTS (default "10000,50000"; one replay server per size, one after the other), POD
// (realistic | small). With `run.mjs --server real` the contenders sync a namespace of a real kube-apiserver that
// setup() fills with SYNC_OBJECTS realistic pods (default "20000") through the API.
import {
  CLIENT_GO,
  CLIENT_GO_NO_GZIP,
  CLIENT_GO_STRIP,
  clientGoAvailability,
  runClientGo,
  warnNoClientGo,
} from '../lib/client-go.mjs';
import {
  benchTarget,
  CLIENT_NODE,
  clientGoArgs,
  compactStoreSupported,
  cpuMs,
  gc,
  INFORMERS,
  KUBELOOP,
  KUBELOOP_COMPACT,
  KUBELOOP_COMPACT_FULL,
  KUBELOOP_LAZY,
  KUBELOOP_NO_GZIP,
  KUBELOOP_SEMI_SPACE,
  KUBELOOP_STRIP,
  KUBELOOP_WATCHLIST,
  KUBELOOP_WHOLE,
  metricsOf,
  NODE_ARGS,
  peakRss,
  RAW,
  ratio,
  realSetup,
  replayLog,
  replaySetup,
  retainedNow,
  round,
  SMOKE,
  waiter,
} from '../lib/common.mjs';
import { onRealServer, realKubeconfig } from '../lib/real-server.mjs';

const REAL = onRealServer();
const SIZES = (process.env.SYNC_OBJECTS ?? (SMOKE ? '20' : REAL ? '20000' : '10000,50000'))
  .split(',')
  .map((s) => Number(s.trim()));
if (SIZES.some((n) => !Number.isInteger(n) || n < 1))
  throw new Error('SYNC_OBJECTS: comma-separated positive integers');
const SHAPE = process.env.POD === 'small' ? 'small' : 'realistic';
const scenarioFor = (n) => `informer-sync ${n} ${SHAPE} pods${REAL ? ' (real kube-apiserver)' : ''}`;
if (REAL && SHAPE !== 'realistic')
  throw new Error('POD=small: the real server is filled with realistic pods only');
/** Whether the client-go contender runs (the same answer in every process of the run). */
function withClientGo() {
  const a = clientGoAvailability(REAL ? realKubeconfig() : undefined);
  if (!a.go) warnNoClientGo(a.reason);
  return Boolean(a.go);
}

/** The suite for one size (one replay server). */
function makeSuite(objects) {
  const SCENARIO = scenarioFor(objects);
  async function setup() {
    return REAL ? realSetup({ objects }) : replaySetup({ objects, shape: SHAPE });
  }

  /** client-go, in its own process: main.go measures itself the same way as `task` below. */
  function goTask(impl) {
    return {
      scenario: SCENARIO,
      impl,
      measure: async () => {
        const target = benchTarget();
        const bin = process.env.BENCH_CLIENT_GO_BIN;
        if (!bin) throw new Error('bench: the client-go contender was not built (setup)');
        const r = await runClientGo(
          bin,
          clientGoArgs(
            target,
            impl === CLIENT_GO_STRIP
              ? ['-strip-managed-fields']
              : impl === CLIENT_GO_NO_GZIP
                ? ['-disable-compression']
                : [],
          ),
        );
        const jsonBytes = REAL ? target.podBytes * objects : target.podBytes;
        return { ...r, jsonBytes, retainedVsJsonBytes: round(r.retainedBytes / jsonBytes, 3) };
      },
    };
  }

  function task(impl) {
    return {
      scenario: SCENARIO,
      impl,
      ...(NODE_ARGS[impl] ? { nodeArgs: NODE_ARGS[impl] } : {}),
      measure: async () => {
        const target = benchTarget();
        const { kubeconfig, url } = target;
        const podBytes = REAL ? target.podBytes * objects : target.podBytes;
        const informer = await INFORMERS[impl](kubeconfig, target.scope);
        let adds = 0;
        // on the real server a client that does not sync in 5 min (client-node, whose informer can stall when its
        // unpaged list from etcd outlives the request timeout) fails its run instead of stalling the whole bench
        const allAdded = waiter(() => adds >= objects, REAL ? 300_000 : 600_000, `${objects} adds`);
        if (impl === KUBELOOP_WATCHLIST) await replayLog(url, true);
        gc();
        const before = retainedNow();
        const cpu0 = cpuMs();
        const t0 = performance.now();
        await informer.start(
          () => {
            adds++;
            if (adds === objects) allAdded.poke();
          },
          () => {},
        );
        const tSynced = performance.now();
        const cpuSynced = cpuMs();
        allAdded.poke();
        await allAdded.done;
        const peak = peakRss();
        if (informer.count() !== objects)
          throw new Error(`${impl}: cached ${informer.count()} of ${objects} pods`);
        // what the cache keeps, once the loop has been idle (a request's leftovers may live until then)
        if (!SMOKE) await new Promise((r) => setTimeout(r, 300));
        gc();
        const retained = retainedNow() - before;
        const extra = {};
        if (impl === KUBELOOP_WATCHLIST) {
          const log = await replayLog(url);
          extra.watchListUsed = log.some((e) => e.path.includes('sendInitialEvents=true'));
        }
        if (impl === KUBELOOP_COMPACT || impl === KUBELOOP_COMPACT_FULL)
          extra.compactStore = informer.store?.constructor?.name === 'CompactIndexer';
        Object.assign(extra, informer.notes ?? {});
        await informer.stop();
        const ms = tSynced - t0;
        return {
          opsPerSec: Math.round((objects / ms) * 1000),
          objects,
          jsonBytes: podBytes,
          timeToSyncedMs: round(ms),
          cpuToSyncedMs: round(cpuSynced - cpu0),
          retainedBytes: retained,
          retainedBytesPerObject: Math.round(retained / objects),
          retainedVsJsonBytes: round(retained / podBytes, 3),
          peakRssBytes: peak,
          ...extra,
        };
      },
    };
  }

  async function tasks() {
    const impls = [RAW, KUBELOOP, KUBELOOP_SEMI_SPACE, KUBELOOP_STRIP];
    // the real server: no WatchList (this kube-apiserver, 1.32 on etcd 3.4, fails it with a 500); the compact
    // store (objects kept as bytes, parsed on read) is the "lazy objects" row of the README
    if (await compactStoreSupported()) impls.push(KUBELOOP_COMPACT, KUBELOOP_COMPACT_FULL, KUBELOOP_LAZY);
    if (!REAL) impls.push(KUBELOOP_WATCHLIST);
    impls.push(CLIENT_NODE);
    const all = impls.map(task);
    if (withClientGo()) all.push(goTask(CLIENT_GO), goTask(CLIENT_GO_STRIP));
    // the list decode before the streaming one, side by side with it (the README's "tried approaches")
    if (REAL) all.push(task(KUBELOOP_WHOLE));
    // both without gzip'd replies (on loopback the compression costs the server and the client)
    if (REAL) all.push(task(KUBELOOP_NO_GZIP));
    if (REAL && withClientGo()) all.push(goTask(CLIENT_GO_NO_GZIP));
    return all;
  }

  /** The ratios of `a` to `b` (medians), with what they compare. */
  function vs(results, a, b, what) {
    const x = metricsOf(results, SCENARIO, a);
    const y = metricsOf(results, SCENARIO, b);
    if (!x || !y) return [];
    return [
      {
        scenario: SCENARIO,
        impl: `${a} vs ${b}`,
        ratio: ratio(x.timeToSyncedMs, y.timeToSyncedMs),
        ratioOf: what,
        ratios: {
          timeToSyncedMs: ratio(x.timeToSyncedMs, y.timeToSyncedMs),
          cpuToSyncedMs: ratio(x.cpuToSyncedMs, y.cpuToSyncedMs),
          retainedBytes: ratio(x.retainedBytes, y.retainedBytes),
          peakRssBytes: ratio(x.peakRssBytes, y.peakRssBytes),
        },
      },
    ];
  }

  function summary(results) {
    const raw = metricsOf(results, SCENARIO, RAW);
    const cn = metricsOf(results, SCENARIO, CLIENT_NODE);
    const out = [
      ...vs(
        results,
        KUBELOOP,
        CLIENT_GO,
        'time to synced ÷ client-go (target ≤ 1.0; CPU ≤ 1.2, retained ≤ 0.6, peak RSS ≤ 1.0)',
      ),
      ...vs(
        results,
        KUBELOOP_STRIP,
        CLIENT_GO_STRIP,
        'both stripping managedFields: time to synced ÷ client-go',
      ),
      ...vs(results, KUBELOOP_WHOLE, CLIENT_GO, 'list body read whole: time to synced ÷ client-go'),
      ...vs(results, KUBELOOP, KUBELOOP_WHOLE, 'streaming list decode ÷ whole-text decode'),
      ...vs(results, KUBELOOP_NO_GZIP, CLIENT_GO_NO_GZIP, 'both without gzip: time to synced ÷ client-go'),
      ...vs(results, KUBELOOP_SEMI_SPACE, CLIENT_GO, '--max-semi-space-size=64: time to synced ÷ client-go'),
      ...vs(results, KUBELOOP_SEMI_SPACE, KUBELOOP, '--max-semi-space-size=64 ÷ default heap settings'),
      ...vs(
        results,
        KUBELOOP_COMPACT,
        KUBELOOP_STRIP,
        'compact store ÷ plain store (both stripping managedFields)',
      ),
      ...vs(
        results,
        KUBELOOP_COMPACT_FULL,
        CLIENT_GO,
        'compact store, no transform: time to synced ÷ client-go',
      ),
      ...vs(results, KUBELOOP_COMPACT_FULL, KUBELOOP, 'compact store ÷ plain store (no transform)'),
      ...vs(results, KUBELOOP_LAZY, CLIENT_GO, "objectRetention 'bytes': time to synced ÷ client-go"),
      ...vs(results, KUBELOOP_LAZY, KUBELOOP, "objectRetention 'bytes' ÷ 'objects' (the default)"),
      ...vs(results, KUBELOOP_COMPACT, CLIENT_GO_STRIP, 'compact store (+ strip) ÷ client-go (+ strip)'),
      ...vs(results, RAW, CLIENT_GO, 'time to synced ÷ client-go'),
      ...vs(results, CLIENT_NODE, CLIENT_GO, 'time to synced ÷ client-go'),
    ];
    for (const impl of [
      KUBELOOP,
      KUBELOOP_LAZY,
      KUBELOOP_SEMI_SPACE,
      KUBELOOP_STRIP,
      KUBELOOP_COMPACT,
      KUBELOOP_WATCHLIST,
    ]) {
      const k = metricsOf(results, SCENARIO, impl);
      if (!k) continue;
      out.push({
        scenario: SCENARIO,
        impl: `${impl} vs ${RAW}`,
        ratio: ratio(k.timeToSyncedMs, raw?.timeToSyncedMs),
        ratioOf: 'time to synced ÷ raw limit (target ≤ 1.1)',
        ratios: {
          timeToSyncedMs: ratio(k.timeToSyncedMs, raw?.timeToSyncedMs),
          cpuToSyncedMs: ratio(k.cpuToSyncedMs, raw?.cpuToSyncedMs),
          retainedBytes: ratio(k.retainedBytes, raw?.retainedBytes),
          peakRssBytes: ratio(k.peakRssBytes, raw?.peakRssBytes),
          retainedVsJsonBytes: k.retainedVsJsonBytes,
        },
      });
      out.push({
        scenario: SCENARIO,
        impl: `${impl} vs ${CLIENT_NODE}`,
        ratio: ratio(k.timeToSyncedMs, cn?.timeToSyncedMs),
        ratioOf: 'time to synced ÷ client-node (target ≤ 0.7)',
        ratios: {
          timeToSyncedMs: ratio(k.timeToSyncedMs, cn?.timeToSyncedMs),
          cpuToSyncedMs: ratio(k.cpuToSyncedMs, cn?.cpuToSyncedMs),
          retainedBytes: ratio(k.retainedBytes, cn?.retainedBytes),
          peakRssBytes: ratio(k.peakRssBytes, cn?.peakRssBytes),
        },
      });
    }
    if (cn && raw)
      out.push({
        scenario: SCENARIO,
        impl: `${CLIENT_NODE} vs ${RAW}`,
        ratio: ratio(cn.timeToSyncedMs, raw.timeToSyncedMs),
        ratioOf: 'time to synced ÷ raw limit',
        ratios: {
          cpuToSyncedMs: ratio(cn.cpuToSyncedMs, raw.cpuToSyncedMs),
          retainedBytes: ratio(cn.retainedBytes, raw.retainedBytes),
          peakRssBytes: ratio(cn.peakRssBytes, raw.peakRssBytes),
        },
      });
    return out;
  }
  return { setup, tasks, summary };
}

/** One variant per size: run.mjs starts one replay server per size, one after the other. */
export const variants = () => SIZES.map(String);
export const setup = (v) => makeSuite(Number(v)).setup();
export const tasks = (v) => makeSuite(Number(v)).tasks();
export const summary = (results, v) => makeSuite(Number(v)).summary(results);
