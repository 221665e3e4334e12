// What one listed realistic pod costs the informer's process, by what is kept of it — the figures behind the
// "approaches" rows of bench/README.md (lazy objects, decoding off the main thread). Not a suite of run.mjs:
//   npm run build:all && node --expose-gc bench/informer-sync/item-cost.mjs   (ITEM_COST_PODS, default 20000)
// CPU (user + system) per pod, the median of 3 interleaved rounds, each ending with a full GC so that what a
// kept object costs the collector is counted.
import { deserialize, serialize } from 'node:v8';
import { deepFreeze } from '../../packages/cache/dist/freeze.js';
import { realisticPod } from '../lib/pods.mjs';

if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');
const N = Number(process.env.ITEM_COST_PODS) || 20_000;
const bufs = Array.from({ length: N }, (_, i) => Buffer.from(JSON.stringify(realisticPod(i))));
const parsedOnce = bufs.map((b) => JSON.parse(b.toString()));
const serialized = parsedOnce.map((o) => serialize(o));
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
/** Name → the work for all N pods; what it returns is kept until the round's GC has run. */
const cases = {
  'objects kept (the plain store): decode + JSON.parse + deepFreeze': () =>
    bufs.map((b) => deepFreeze(JSON.parse(b.toString()))),
  'bytes kept, re-encoded (the compact store): parse + freeze + JSON.stringify': () =>
    bufs.map((b) => Buffer.from(JSON.stringify(deepFreeze(JSON.parse(b.toString()))))),
  'bytes kept as received (lazy): parse + freeze for the handlers, object dropped': () =>
    bufs.map((b) => {
      deepFreeze(JSON.parse(b.toString()));
      return b;
    }),
  'parse only, object dropped': () =>
    bufs.map((b) => {
      JSON.parse(b.toString());
      return b;
    }),
  'worker side of postMessage: v8.serialize of a parsed pod': () => parsedOnce.map((o) => serialize(o)),
  'main side of postMessage: v8.deserialize, kept': () => serialized.map((s) => deserialize(s)),
};
const runs = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (let round = 0; round < 3; round++)
  for (const [name, fn] of Object.entries(cases)) {
    globalThis.gc();
    const c0 = cpuMs();
    let kept = fn();
    globalThis.gc();
    runs[name].push(cpuMs() - c0);
    kept = null;
    void kept;
  }
const bytes = Math.round(bufs.reduce((s, b) => s + b.length, 0) / N);
console.log(`${N} realistic pods, ${bytes} JSON bytes each; CPU per pod, median of 3 rounds:`);
for (const [name, ms] of Object.entries(runs)) {
  ms.sort((a, b) => a - b);
  console.log(`  ${((ms[1] / N) * 1000).toFixed(1).padStart(7)} µs  ${name}`);
}
