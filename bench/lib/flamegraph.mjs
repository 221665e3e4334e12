#!/usr/bin/env node
// Turns a V8 .cpuprofile (node --cpu-prof) into a flame graph as plain SVG, and prints the functions with the
// most self time. Usage: node lib/flamegraph.mjs <in.cpuprofile> <out.svg> [title] [--focus <function name>]
// With --focus, only stacks through that function are drawn (rooted at it), e.g. the watch-event path.
import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';

const args = process.argv.slice(2);
const focusAt = args.indexOf('--focus');
const focus = focusAt >= 0 ? args.splice(focusAt, 2)[1] : undefined;
const [input, output, title = basename(input ?? '')] = args;
if (!input || !output) {
  console.error('usage: flamegraph.mjs <in.cpuprofile> <out.svg> [title] [--focus <function>]');
  process.exit(2);
}
const prof = JSON.parse(readFileSync(input, 'utf8'));
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
// self samples per node (deltas in µs)
const self = new Map();
const deltas = prof.timeDeltas ?? [];
for (let i = 0; i < prof.samples.length; i++) {
  const id = prof.samples[i];
  self.set(id, (self.get(id) ?? 0) + (deltas[i] ?? 0));
}

const label = (n) => {
  const f = n.callFrame;
  const file = f.url ? f.url.replace(/^.*\/(node_modules|packages|bench)\//, '$1/') : '';
  return `${f.functionName || '(anonymous)'}${file ? ` ${file}:${f.lineNumber + 1}` : ''}`;
};

// merged tree of stacks: root → … → leaf, weights in µs
const root = { name: 'all', value: 0, children: new Map() };
for (const [id, us] of self) {
  if (!us) continue;
  const stack = [];
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) stack.push(byId.get(cur));
  stack.reverse();
  let frames = stack.filter((n) => n.callFrame.functionName !== '(root)');
  if (focus) {
    const at = frames.findIndex((n) => n.callFrame.functionName === focus);
    if (at < 0) continue;
    frames = frames.slice(at);
  }
  let node = root;
  root.value += us;
  for (const n of frames) {
    const name = label(n);
    let child = node.children.get(name);
    if (!child) {
      child = { name, value: 0, children: new Map() };
      node.children.set(name, child);
    }
    child.value += us;
    node = child;
  }
}

// top self time by function
const selfByName = new Map();
for (const [id, us] of self) {
  const n = byId.get(id);
  const name = label(n);
  selfByName.set(name, (selfByName.get(name) ?? 0) + us);
}
const total = [...selfByName.values()].reduce((a, b) => a + b, 0);
const top = [...selfByName].sort((a, b) => b[1] - a[1]).slice(0, 25);
for (const [name, us] of top) console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`);

// icicle-style flame graph (root at the top), widths proportional to time
const W = 1200;
const H = 16;
const rows = [];
const walk = (node, x, depth) => {
  const w = (node.value / root.value) * W;
  if (w < 0.3) return;
  rows.push({ name: node.name, x, y: depth * H + 24, w, value: node.value });
  let cx = x;
  for (const c of [...node.children.values()].sort((a, b) => b.value - a.value)) {
    walk(c, cx, depth + 1);
    cx += (c.value / root.value) * W;
  }
};
walk(root, 0, 0);
const height = Math.max(...rows.map((r) => r.y)) + H + 8;
const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const color = (name) => {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return name.includes('node_modules/@kubernetes')
    ? `hsl(200,60%,${60 + (h % 15)}%)`
    : name.includes('packages/')
      ? `hsl(${20 + (h % 30)},80%,${58 + (h % 12)}%)`
      : `hsl(${40 + (h % 20)},70%,${62 + (h % 12)}%)`;
};
const svg = [
  `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" font-family="monospace" font-size="11">`,
  `<title>flame graph: ${esc(title)}</title>`,
  `<text x="4" y="15" font-size="13">${esc(title)} — ${(root.value / 1000).toFixed(0)} ms sampled${focus ? `, stacks through ${esc(focus)}` : ''} (hover for names)</text>`,
  ...rows.map((r) => {
    const pct = ((100 * r.value) / root.value).toFixed(1);
    const text =
      r.w > 40
        ? `<text x="${(r.x + 3).toFixed(1)}" y="${r.y + 12}">${esc(r.name.slice(0, Math.floor(r.w / 6.6)))}</text>`
        : '';
    return `<g><title>${esc(r.name)} (${pct}%)</title><rect x="${r.x.toFixed(1)}" y="${r.y}" width="${Math.max(0.3, r.w - 0.3).toFixed(1)}" height="${H - 1}" fill="${color(r.name)}"/>${text}</g>`;
  }),
  '</svg>',
];
writeFileSync(output, svg.join('\n'));
