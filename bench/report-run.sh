#!/bin/sh
# Runs every scenario at the sizes bench/README.md reports and writes one JSON-lines file per suite into
# results/, plus results/machine.json. Usage (from bench/, after a build): sh report-run.sh [suite ...]
set -e
cd "$(dirname "$0")"
mkdir -p results
node -e '
const os = require("node:os");
const fs = require("node:fs");
fs.writeFileSync("results/machine.json", JSON.stringify({
  date: new Date().toISOString(), node: process.version, platform: `${os.type()} ${os.release()} ${os.arch()}`,
  cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  loadAverageAtStart: os.loadavg().map((x) => Number(x.toFixed(2))),
}, null, 1));'
suites="${*:-informer-sync watch-throughput cache-read workqueue limiter e2e-reconcile startup-backlog h2-watches webhook informer}"
# results/runs.jsonl: one line per suite run (appended): when, the sizes asked for, and `uptime` before and
# after — the box may be shared, so the load a figure was measured under stays next to it.
for s in $suites; do
  echo "== $s $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  start="$(date -u +%FT%TZ)"; up0="$(uptime)"
  node --expose-gc run.mjs "$s" --json --repeat "${REPEAT:-1}" > "results/$s.jsonl.tmp"
  mv "results/$s.jsonl.tmp" "results/$s.jsonl"
  S="$s" START="$start" UP0="$up0" UP1="$(uptime)" node -e '
const e = process.env;
const knobs = Object.fromEntries(Object.entries(e).filter(([k]) => /^(SYNC|WATCH|E2E|READ|TIMERS|SPREAD|LIMITER|BACKLOG|H2|WEBHOOK)_/.test(k)));
require("node:fs").appendFileSync("results/runs.jsonl", JSON.stringify({ suite: e.S, started: e.START,
  finished: new Date().toISOString(), knobs, uptimeBefore: e.UP0.trim(), uptimeAfter: e.UP1.trim() }) + "\n");'
done
node -e '
const fs = require("node:fs");
const m = JSON.parse(fs.readFileSync("results/machine.json", "utf8"));
m.loadAverageAtEnd = require("node:os").loadavg().map((x) => Number(x.toFixed(2)));
m.finished = new Date().toISOString();
fs.writeFileSync("results/machine.json", JSON.stringify(m, null, 1));'
