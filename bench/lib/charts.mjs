#!/usr/bin/env node
// Draws the bench/README.md charts from the JSON lines in results/ (written by report-run.sh): one SVG per
// scenario and metric, horizontal bars per implementation, plain generated SVG (no dependencies).
// Usage (from bench/): node lib/charts.mjs [resultsDir=results] [outDir=charts]
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [resultsDir = 'results', outDir = 'charts'] = process.argv.slice(2);

/** Which metrics to draw per suite: [field, label, unit divisor, unit, lowerIsBetter]. */
const METRICS = {
  'informer-sync': [
    ['timeToSyncedMs', 'time to synced', 1000, 's', true],
    ['cpuToSyncedMs', 'client CPU to synced', 1000, 's', true],
    ['retainedBytes', 'retained memory after GC (heap + ArrayBuffers)', 2 ** 20, 'MiB', true],
    ['peakRssBytes', 'peak RSS', 2 ** 20, 'MiB', true],
  ],
  'watch-throughput': [
    ['opsPerSec', 'events/s', 1, 'events/s', false],
    ['cpuUsPerEvent', 'client CPU per event', 1, 'µs', true],
  ],
  'cache-read': [['nsPerOp', 'time per call', 1000, 'µs', true]],
  workqueue: [
    ['nsPerOp', 'time per key (add+get+done)', 1, 'ns', true],
    ['cpuMs', 'CPU for all timers', 1, 'ms', true],
  ],
  limiter: [['requestsInWindow', 'requests the server saw in the window', 1, 'requests', false]],
  'e2e-reconcile': [
    ['p50Ms', 'p50 latency', 1, 'ms', true],
    ['p99Ms', 'p99 latency', 1, 'ms', true],
  ],
  'startup-backlog': [
    ['liveP50Ms', 'live-change p50 latency', 1, 'ms', true],
    ['liveP99Ms', 'live-change p99 latency', 1, 'ms', true],
  ],
  'h2-watches': [
    ['socketsOpen', 'client sockets with every watch open', 1, 'sockets', true],
    ['rssGrowthBytes', 'RSS growth from opening the watches', 2 ** 20, 'MiB', true],
    ['p99Ms', 'change → watch delivery p99', 1, 'ms', true],
  ],
  informer: [
    ['cpuToSyncedMs', 'client CPU to synced', 1, 'ms', true],
    ['cpuUsPerEvent', 'client CPU per update event', 1, 'µs', true],
  ],
};

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const slug = (s) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
const fmt = (x) => (x >= 100 ? Math.round(x).toLocaleString('en-US') : x >= 10 ? x.toFixed(1) : x.toFixed(2));

function barChart(title, subtitle, bars) {
  const W = 760;
  const labelW = 250;
  const barH = 22;
  const top = 46;
  const max = Math.max(...bars.map((b) => b.value));
  const H = top + bars.length * (barH + 6) + 10;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<title>${esc(title)}</title>`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="8" y="18" font-size="14" font-weight="bold">${esc(title)}</text>`,
    `<text x="8" y="36" fill="#555">${esc(subtitle)}</text>`,
  ];
  bars.forEach((b, i) => {
    const y = top + i * (barH + 6);
    const w = max > 0 ? ((W - labelW - 90) * b.value) / max : 0;
    const fill = b.name.startsWith('kubeloop')
      ? '#e0772b'
      : b.name.startsWith('raw') || b.name.startsWith('bare')
        ? '#8a8a8a'
        : '#3b7dd8';
    out.push(
      `<text x="${labelW - 6}" y="${y + 15}" text-anchor="end">${esc(b.name)}</text>`,
      `<rect x="${labelW}" y="${y}" width="${Math.max(1, w).toFixed(1)}" height="${barH}" fill="${fill}"/>`,
      `<text x="${(labelW + w + 5).toFixed(1)}" y="${y + 15}">${esc(fmt(b.value))}</text>`,
    );
  });
  out.push('</svg>');
  return out.join('\n');
}

mkdirSync(outDir, { recursive: true });
const written = [];
for (const f of readdirSync(resultsDir)
  .filter((x) => x.endsWith('.jsonl'))
  .sort()) {
  const suite = f.replace(/\.jsonl$/, '');
  const lines = readFileSync(join(resultsDir, f), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
  const results = lines.filter((l) => 'opsPerSec' in l);
  const scenarios = [...new Set(results.map((r) => r.scenario))];
  for (const scenario of scenarios) {
    for (const [field, label, div, unit, lower] of METRICS[suite] ?? []) {
      const bars = results
        .filter((r) => r.scenario === scenario)
        .map((r) => ({ name: r.impl, value: (r.medians ?? r)[field] }))
        .filter((b) => typeof b.value === 'number' && Number.isFinite(b.value))
        .map((b) => ({ ...b, value: b.value / div }));
      if (bars.length < 2) continue;
      const name = `${slug(scenario)}--${slug(field)}.svg`;
      writeFileSync(
        join(outDir, name),
        barChart(
          `${scenario}: ${label}`,
          `${unit}, ${lower ? 'lower' : 'higher'} is better (one run, see README)`,
          bars,
        ),
      );
      written.push(name);
    }
  }
}
console.log(written.join('\n'));
