// informer-sync (replay server): time from start to synced for an informer over N realistic pods (paged lists of
// 500, pre-encoded), client CPU, retained memory after GC, and peak RSS — kubeloop (default, with
// stripManagedFields, with the compact store, with WatchList) vs @kubernetes/client-node's makeInformer vs the raw
// limit. Knobs: SYNC_OBJECTS (default "10000,50000"; one replay server per size, one after the other), POD
// (realistic | small).
import {
  CLIENT_NODE,
  compactStoreSupported,
  cpuMs,
  gc,
  INFORMERS,
  KUBELOOP,
  KUBELOOP_COMPACT,
  KUBELOOP_STRIP,
  KUBELOOP_WATCHLIST,
  metricsOf,
  peakRss,
  RAW,
  ratio,
  replayEnv,
  replayLog,
  replaySetup,
  retainedNow,
  round,
  SMOKE,
  waiter,
} from '../lib/common.mjs';

const SIZES = (process.env.SYNC_OBJECTS ?? (SMOKE ? '20' : '10000,50000'))
  .split(',')
  .map((s) => Number(s.trim()));
if (SIZES.some((n) => !Number.isInteger(n) || n < 1))
  throw new Error('SYNC_OBJECTS: comma-separated positive integers');
const SHAPE = process.env.POD === 'small' ? 'small' : 'realistic';
const scenarioFor = (n) => `informer-sync ${n} ${SHAPE} pods`;

/** The suite for one size (one replay server). */
function makeSuite(objects) {
  const SCENARIO = scenarioFor(objects);
  async function setup() {
    return replaySetup({ objects, shape: SHAPE });
  }

  function task(impl) {
    return {
      scenario: SCENARIO,
      impl,
      measure: async () => {
        const { kubeconfig, url, podBytes } = replayEnv();
        const informer = await INFORMERS[impl](kubeconfig);
        let adds = 0;
        const allAdded = waiter(() => adds >= objects, 600_000, `${objects} adds`);
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
        if (impl === KUBELOOP_COMPACT)
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
    const impls = [RAW, KUBELOOP, KUBELOOP_STRIP];
    if (await compactStoreSupported()) impls.push(KUBELOOP_COMPACT);
    impls.push(KUBELOOP_WATCHLIST, CLIENT_NODE);
    return impls.map(task);
  }

  function summary(results) {
    const raw = metricsOf(results, SCENARIO, RAW);
    const cn = metricsOf(results, SCENARIO, CLIENT_NODE);
    const out = [];
    for (const impl of [KUBELOOP, KUBELOOP_STRIP, KUBELOOP_COMPACT, KUBELOOP_WATCHLIST]) {
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
