// Where the wall time of one informer sync goes (bench/README.md, informer-sync "Method"): starts the replay
// server in a child process (as run.mjs does, so the server has its own thread), then syncs ONE implementation
// in this process and prints one JSON line: time to synced; client CPU; main-thread time on a CPU and waiting
// for one (/proc/<pid>/task/<pid>/schedstat: on a shared box the second is what the wall time is made of);
// event-loop idle time (waiting for the server); GC pause time and count (PerformanceObserver 'gc'); and per
// page, summed: request sent → response headers, headers → last byte (undici diagnostics channels), last byte
// → JSON.parse start, the parse, parse end → next request sent; the last page's end and the first/last add.
//   SYNC_OBJECTS=50000 node --expose-gc informer-sync/phases.mjs kubeloop       (from bench/, after a build)
// impl: raw-limit | kubeloop | kubeloop-strip-managed-fields | kubeloop-watchlist | @kubernetes/client-node-informer
import { spawn } from 'node:child_process';
import dc from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { createInterface } from 'node:readline';

const impl = process.argv[2] ?? 'kubeloop';
const objects = Number(process.env.SYNC_OBJECTS ?? 50000);
const server = spawn(
  process.execPath,
  [
    '--input-type=module',
    '-e',
    `const { startReplayServer } = await import(${JSON.stringify(new URL('../lib/replay-server.mjs', import.meta.url).href)});
     const s = await startReplayServer({ objects: ${objects}, shape: process.env.POD === 'small' ? 'small' : 'realistic' });
     console.log(JSON.stringify({ url: s.url, kubeconfig: s.kubeconfigPath, podBytes: s.podBytes }));
     process.stdin.resume(); process.stdin.on('end', () => s.close().then(() => process.exit(0)));`,
  ],
  { stdio: ['pipe', 'pipe', 'inherit'] },
);
const first = await new Promise((resolve, reject) => {
  createInterface({ input: server.stdout }).once('line', resolve);
  server.once('exit', (c) => reject(new Error(`replay server exited (${c})`)));
});
const { url, kubeconfig, podBytes } = JSON.parse(first);
process.env.BENCH_REPLAY_URL = url;
process.env.BENCH_REPLAY_KUBECONFIG = kubeconfig;
process.env.BENCH_REPLAY_POD_BYTES = String(podBytes);
const { INFORMERS } = await import('../lib/common.mjs');
if (!INFORMERS[impl]) throw new Error(`unknown impl ${impl}`);

let t0 = 0;
const rel = () => performance.now() - t0;
const requests = new Map();
const pages = [];
dc.subscribe('undici:request:create', ({ request }) => {
  if (!request.path.includes('/pods') || request.path.includes('watch=')) return;
  const r = { sent: rel() };
  requests.set(request, r);
  pages.push(r);
});
dc.subscribe('undici:request:headers', ({ request }) => {
  const r = requests.get(request);
  if (r) r.headers = rel();
});
dc.subscribe('undici:request:trailers', ({ request }) => {
  const r = requests.get(request);
  if (r) r.done = rel();
});
const parses = [];
const parse = JSON.parse;
JSON.parse = function timedParse(text, reviver) {
  if (typeof text !== 'string' || text.length < 1e6) return parse(text, reviver);
  const s = rel();
  const out = parse(text, reviver);
  parses.push({ s, e: rel() });
  return out;
};
let gcMs = 0;
let gcCount = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcMs += e.duration;
    gcCount++;
  }
}).observe({ entryTypes: ['gc'] });
const sched = () =>
  readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8').split(' ').map(Number);

const informer = await INFORMERS[impl](kubeconfig);
let adds = 0;
let firstAdd = 0;
let lastAdd = 0;
globalThis.gc?.();
const elu0 = performance.eventLoopUtilization();
const s0 = sched();
const c0 = process.cpuUsage();
t0 = performance.now();
await informer.start(
  () => {
    adds++;
    if (adds === 1) firstAdd = rel();
    if (adds === objects) lastAdd = rel();
  },
  () => {},
);
const synced = rel();
const cpu = process.cpuUsage(c0);
const s1 = sched();
const elu = performance.eventLoopUtilization(elu0);
const sum = (f) => Math.round(pages.reduce((a, p, i) => a + (f(p, i) || 0), 0));
const ms = (x) => Math.round(x);
console.log(
  JSON.stringify({
    impl,
    objects,
    timeToSyncedMs: ms(synced),
    cpuMs: ms((cpu.user + cpu.system) / 1000),
    mainThreadOnCpuMs: ms((s1[0] - s0[0]) / 1e6),
    mainThreadRunQueueWaitMs: ms((s1[1] - s0[1]) / 1e6),
    eventLoopIdleMs: ms(elu.idle),
    gcPauseMs: ms(gcMs),
    gcCount,
    pages: pages.length,
    sumSentToHeadersMs: sum((p) => p.headers - p.sent),
    sumHeadersToLastByteMs: sum((p) => p.done - p.headers),
    sumLastByteToParseMs: sum((p, i) => parses[i] && parses[i].s - p.done),
    sumParseMs: sum((_p, i) => parses[i] && parses[i].e - parses[i].s),
    sumParseEndToNextSentMs: sum((_p, i) => parses[i] && pages[i + 1] && pages[i + 1].sent - parses[i].e),
    lastPageParsedMs: ms(parses.at(-1)?.e ?? 0),
    firstAddMs: ms(firstAdd),
    lastAddMs: ms(lastAdd),
    uptime: readFileSync('/proc/loadavg', 'utf8').trim(),
  }),
);
await informer.stop();
server.stdin.end();
