#!/usr/bin/env node
// Prints the "targets" table of bench/README.md (markdown) from the JSON lines in results/: each issue-11/10
// target beside the ratio a run measured, and whether it is met. Usage (from bench/): node lib/report.mjs [results]
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? 'results';
const lines = readdirSync(dir)
  .filter((f) => f.endsWith('.jsonl'))
  .flatMap((f) =>
    readFileSync(join(dir, f), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l)),
  );
const summaryLine = (scenarioPrefix, impl) =>
  lines.find((l) => 'ratio' in l && l.scenario.startsWith(scenarioPrefix) && l.impl === impl);
const rows = [];
/** @param {string} what @param {string} target @param {number | null | undefined} value @param {(v: number) => boolean} ok */
function row(what, target, value, ok) {
  const v = typeof value === 'number' ? value : null;
  // a target in parentheses is context, not a goal
  const status = v === null || target.startsWith('(') ? '—' : ok(v) ? 'met' : '**missed**';
  rows.push(`| ${what} | ${target} | ${v === null ? 'n/a' : v.toFixed(3)} | ${status} |`);
}
const CN = '@kubernetes/client-node-informer';
for (const n of [10000, 50000]) {
  const sc = `informer-sync ${n} realistic pods`;
  const kr = summaryLine(sc, 'kubeloop vs raw-limit');
  const kc = summaryLine(sc, `kubeloop vs ${CN}`);
  if (!kr) continue;
  row(`${sc}: time to synced ÷ raw`, '≤ 1.1', kr.ratios.timeToSyncedMs, (v) => v <= 1.1);
  row(`${sc}: time to synced ÷ client-node`, '≤ 0.7', kc?.ratios.timeToSyncedMs, (v) => v <= 0.7);
  row(`${sc}: client CPU ÷ raw`, '(context)', kr.ratios.cpuToSyncedMs, () => true);
  row(`${sc}: retained memory ÷ raw Map`, '≤ 1.0', kr.ratios.retainedBytes, (v) => v <= 1.0);
  row(
    `${sc}: retained, stripManagedFields ÷ raw Map`,
    '≤ 0.6',
    summaryLine(sc, 'kubeloop-strip-managed-fields vs raw-limit')?.ratios.retainedBytes,
    (v) => v <= 0.6,
  );
  row(
    `${sc}: retained, compact store (+ stripManagedFields) ÷ raw JSON bytes`,
    '≤ 1.0',
    summaryLine(sc, 'kubeloop-compact-store vs raw-limit')?.ratios.retainedVsJsonBytes,
    (v) => v <= 1.0,
  );
  row(`${sc}: peak RSS ÷ raw`, '≤ 1.1', kr.ratios.peakRssBytes, (v) => v <= 1.1);
  row(
    `${sc}: WatchList peak RSS ÷ raw (paged)`,
    '(report)',
    summaryLine(sc, 'kubeloop-watchlist vs raw-limit')?.ratios.peakRssBytes,
    () => true,
  );
}
for (const n of [5000, 50000]) {
  const sc = `watch-throughput`;
  const match = (impl) =>
    lines.find(
      (l) =>
        'ratio' in l &&
        l.scenario.startsWith(sc) &&
        l.scenario.endsWith(` ${n} realistic pods`) &&
        l.impl === impl,
    );
  const kr = match('kubeloop vs raw-limit');
  const kc = match(`kubeloop vs ${CN}`);
  const un = match(`kubeloop-unfrozen vs raw-limit and ${CN}`);
  if (!kr) continue;
  row(`watch-throughput, ${n} pods: events/s ÷ raw`, '≥ 0.9', kr.ratios.opsPerSec, (v) => v >= 0.9);
  row(`watch-throughput, ${n} pods: CPU/event ÷ raw`, '(context)', kr.ratios.cpuUsPerEvent, () => undefined);
  row(`watch-throughput, ${n} pods: events/s ÷ client-node`, '≥ 1.4', kc?.ratios.opsPerSec, (v) => v >= 1.4);
  row(
    `watch-throughput, ${n} pods: CPU/event ÷ client-node`,
    '≤ 0.7',
    kc?.ratios.cpuUsPerEvent,
    (v) => v <= 0.7,
  );
  // The targets are the default client's (frozen objects); the unfrozen option is reported beside them.
  row(
    `watch-throughput, ${n} pods, freezeObjects: false: events/s ÷ raw`,
    '(context)',
    un?.ratios && un.ratio,
    (v) => v >= 0.9,
  );
  row(
    `watch-throughput, ${n} pods, freezeObjects: false: CPU/event ÷ client-node`,
    '(context)',
    un?.ratios.cpuUsPerEventVsClientNode,
    (v) => v <= 0.7,
  );
}
const wqLine = (impl) =>
  lines.find((l) => l.suite === 'workqueue' && l.impl === `${impl} vs bare-map-array-fifo`);
row(
  'workqueue add+get+done ÷ bare FIFO (worker loop)',
  '≤ 2',
  wqLine('kubeloop-queue-worker')?.ratio,
  (v) => v <= 2,
);
row(
  '… priority queue, the builder default (worker loop)',
  '≤ 2',
  wqLine('kubeloop-priority-queue-worker')?.ratio,
  (v) => v <= 2,
);
row('… `await get()` for every item', '(context)', wqLine('kubeloop-queue')?.ratio, () => true);
const cr = lines.find((l) => l.suite === 'cache-read' && 'ratio' in l && l.scenario.includes('by namespace'));
row('cache-read by namespace index ÷ full scan', '≤ 0.02', cr?.ratio, (v) => v <= 0.02);
const lim = lines.find((l) => l.suite === 'limiter' && 'ratio' in l);
row('limiter: requests seen ÷ (burst + QPS × 10 s)', '0.97–1.03', lim?.ratio, (v) => v >= 0.97 && v <= 1.03);
const e2e = lines.find((l) => l.suite === 'e2e-reconcile' && 'ratio' in l);
row('e2e-reconcile p99 ÷ raw watch delivery p99', '≤ 2', e2e?.ratio, (v) => v <= 2);
const sb = lines.find((l) => l.suite === 'startup-backlog' && 'ratio' in l);
row('startup-backlog live p99, priority ÷ plain queue', '≤ 0.1', sb?.ratio, (v) => v <= 0.1);
const h2 = lines.find((l) => l.suite === 'h2-watches' && 'ratio' in l);
row('h2-watches: sockets, HTTP/2 ÷ HTTP/1.1', '(report)', h2?.ratios.socketsOpen, () => undefined);
row('h2-watches: RSS growth, HTTP/2 ÷ HTTP/1.1', '(report)', h2?.ratios.rssGrowthBytes, () => undefined);
row('h2-watches: delivery p99, HTTP/2 ÷ HTTP/1.1', '(report)', h2?.ratio, () => undefined);
console.log('| scenario | target | measured | |\n|---|---|---|---|');
console.log(rows.join('\n'));
