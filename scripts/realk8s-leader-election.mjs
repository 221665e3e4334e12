#!/usr/bin/env node
// Leader election and sharding of pod-counter on a real kube-apiserver + etcd, under the faults of production
// (not in CI: it needs the binaries). Usage:
//   npm run build:all && node scripts/realk8s-leader-election.mjs --assets <dir with kube-apiserver and etcd>
//     [--rounds 50] [--minutes M] [--faults pause,restart,partition] [--lease 8 --renew 6 --retry 1] [--logs dir]
//     [--write docs/reliability.md]
//
// What it does: starts its own kube-apiserver + etcd from --assets (RealControlPlane of @kubeloop/testing: free
// ports, a temporary data directory; a shared server is never touched), then two groups of three pod-counter
// processes, each replica talking to the server through its own FaultProxy: `--leader-elect` (one Lease) and
// `--shards` (a member Lease per replica; namespaces are the keys). A replica that exits (a leader that lost its
// Lease exits, as controller-runtime's do) is started again half a second later, as a Deployment's pod would be.
// Each round waits until both groups are steady (a leader renewing; three members that acknowledged each other),
// then makes one fault: the API server paused (SIGSTOP) for renewDeadline + 1 s, the API server killed and
// restarted, or the leader and one shard member partitioned on their proxies until the others have taken over.
//
// What it measures, from the Leases' write history as the server recorded it (a watch on the Leases, straight to
// the server, resumed from its last resourceVersion after each fault, so every write is seen in resourceVersion
// order; etcd is never compacted here):
// - leader election: a term is the writes of one holder with one acquireTime; it lasts from its acquireTime to
//   its last renewTime + renewDeadline (a leader stops leading when no renew it sent succeeded within the renew
//   deadline). Max leaders at once = the most terms overlapping; failover = the next term's acquireTime minus
//   the last renewTime of the term the fault ended.
// - sharding: a member owns a key from the write of an acknowledgement that gives it the key (and not before
//   every owner whose claim the server took first was released as the protocol lets the member know: that owner's acknowledgement
//   dropping the key, or the last of its renews the server had taken by then + leaseDuration), until it drops the
//   key or its last renew + renewDeadline. Max owners of a key at once over these intervals; every "pod count of
//   an owned namespace" line a replica logged must fall inside its ownership of that namespace; the hand-over
//   time of a round is the longest a key of the faulted member(s) had no owner. A failover or hand-over counts
//   for a round only when it began before the next round's fault (else the round was ridden out).
// - the processes' own view: the leaders' intervals from "became leader" to their exit, overlapping at most 1.
// Prints the figures, exits 1 when a safety figure is broken, and with --write replaces the section between the
// markers <!-- realk8s-leader-election:begin --> and <!-- realk8s-leader-election:end --> of that file.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Namespace, newClient, Pod } from '@kubeloop/client';
import { Lease } from '@kubeloop/client/kinds';
import { FaultProxy, RealControlPlane } from '@kubeloop/testing';
import { analyse, percentile } from './realk8s-leader-election/analyse.mjs';

const { values } = parseArgs({
  options: {
    assets: { type: 'string', default: process.env.KUBEBUILDER_ASSETS },
    rounds: { type: 'string', default: '50' },
    faults: { type: 'string', default: 'pause,restart,partition' },
    lease: { type: 'string', default: '8' },
    renew: { type: 'string', default: '6' },
    retry: { type: 'string', default: '1' },
    keys: { type: 'string', default: '12' },
    write: { type: 'string' },
    logs: { type: 'string' },
    minutes: { type: 'string', default: '600' },
  },
  strict: true,
});
if (!values.assets) {
  console.error('--assets <dir with kube-apiserver and etcd> (or KUBEBUILDER_ASSETS) is required');
  process.exit(2);
}
const ROOT = resolve(new URL('..', import.meta.url).pathname);
const CLI = join(ROOT, 'apps/pod-counter/dist/cli.js');
const rounds = Number(values.rounds);
const faultKinds = values.faults.split(',');
for (const f of faultKinds)
  if (!['pause', 'restart', 'partition'].includes(f)) {
    console.error(`--faults: unknown fault ${f} (pause, restart, partition)`);
    process.exit(2);
  }
const T = {
  leaseMs: Number(values.lease) * 1000,
  renewMs: Number(values.renew) * 1000,
  retryMs: Number(values.retry) * 1000,
};
const LE_NS = 'le-system';
const LE_NAME = 'pod-counter';
const SHARD_NAME = 'pod-counter';
const KEYS = Array.from({ length: Number(values.keys) }, (_, i) => `shard-key-${i}`);
const work = values.logs ? resolve(values.logs) : mkdtempSync(join(tmpdir(), 'kubeloop-le-real-'));
// --logs may name a folder that does not exist yet: the replicas' kubeconfigs and logs are written into it.
mkdirSync(work, { recursive: true });
const say = (s) => console.log(`[${new Date().toISOString().slice(11, 23)}] ${s}`);

say(`starting kube-apiserver + etcd from ${values.assets}; logs in ${work}`);
const replicas = [];
// The history watch resumes from its last resourceVersion after every fault. kube-apiserver's watch cache starts
// empty after a restart and answers such a watch 410 (too old), and the server compacts etcd every 5 min: both are
// turned off, so watches are served from etcd, whose history stays whole for the run.
const cp = await RealControlPlane.start({
  assetsDir: values.assets,
  logToFiles: true,
  startTimeoutMs: 300_000,
  apiServerFlags: ['--watch-cache=false', '--etcd-compaction-interval=0'],
});
// Whatever ends this process, the processes it started end with it.
process.on('exit', () => {
  for (const r of replicas) r.child?.kill('SIGKILL');
  for (const w of ['kube-apiserver', 'etcd']) {
    const pid = cp.controlPlane.pid(w);
    if (pid) process.kill(pid, 'SIGKILL');
  }
});
const admin = newClient({ ...cp.config, qps: -1, burst: 0, timeoutMs: 30_000, userAgent: 'le-real-admin' });
const apiPort = Number(new URL(cp.config.host).port);
const version = execFileSync(join(values.assets, 'kube-apiserver'), ['--version'], { encoding: 'utf8' })
  .trim()
  .replace(/^Kubernetes /, '');
say(`kube-apiserver ${version} at ${cp.config.host}`);

await admin.create(Namespace, { metadata: { name: LE_NS } });
for (const ns of KEYS) {
  await admin.create(Namespace, { metadata: { name: ns } });
  await admin.create(Pod, {
    metadata: { namespace: ns, name: 'p' },
    spec: { containers: [{ name: 'c', image: 'registry.invalid/none' }] },
  });
}

// ---- the Leases' write history -------------------------------------------------------------------------------
let deadline = Number.POSITIVE_INFINITY;
let stoppedEarly; // the signal that ended the run, or '--minutes', when it ended before all its rounds
// SIGTERM / Ctrl-C end the run after the round in flight, with its figures; before the rounds, at once. Either way
// the 'exit' handler stops every process the run started.
let roundsStarted = false;
for (const sig of ['SIGTERM', 'SIGINT'])
  process.on(sig, () => {
    deadline = 0;
    stoppedEarly ??= sig;
    if (!roundsStarted) process.exit(143);
  });
const history = []; // { rv, type, name, holder, acquireTime, renewTime, transitions, drainedFor, at }
const watchStop = new AbortController();
let watchRestarts = 0;
const watching = (async () => {
  let rv;
  for (;;) {
    try {
      const first = await admin.list(Lease, { namespace: LE_NS });
      rv = first.metadata?.resourceVersion;
      for (const l of first.items) record('ADDED', l);
      break;
    } catch (err) {
      say(`listing the Leases failed (${err.message}); again`);
      await sleep(1000);
    }
  }
  while (!watchStop.signal.aborted) {
    // The replicas write a Lease every retry period, so a watch silent for 5 s sits on a connection the server
    // lost (killed or paused): it is given up and resumed from the last resourceVersion seen.
    const attempt = new AbortController();
    const onStop = () => attempt.abort();
    watchStop.signal.addEventListener('abort', onStop);
    let idle;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => attempt.abort(), 5000);
    };
    arm();
    try {
      for await (const ev of admin.watch(Lease, {
        namespace: LE_NS,
        resourceVersion: rv,
        signal: attempt.signal,
        timeoutSeconds: 60,
      })) {
        arm();
        if (ev.type === 'ERROR')
          throw new Error(`watch error event: ${JSON.stringify(ev.object).slice(0, 200)}`);
        if (ev.type === 'BOOKMARK') continue;
        rv = ev.object.metadata?.resourceVersion ?? rv;
        record(ev.type, ev.object);
      }
    } catch (err) {
      if (watchStop.signal.aborted) break;
      if (/410|Gone|too old/i.test(String(err))) throw new Error('the Lease watch lost history (410)');
      await sleep(200);
    } finally {
      clearTimeout(idle);
      watchStop.signal.removeEventListener('abort', onStop);
    }
    watchRestarts++;
  }
})();
let historyLost;
watching.catch((e) => {
  historyLost = e.message;
  deadline = 0;
});
function record(type, l) {
  history.push({
    rv: l.metadata?.resourceVersion,
    type,
    name: l.metadata?.name,
    holder: l.spec?.holderIdentity ?? '',
    acquireTime: l.spec?.acquireTime ? Date.parse(l.spec.acquireTime) : undefined,
    renewTime: l.spec?.renewTime ? Date.parse(l.spec.renewTime) : undefined,
    transitions: l.spec?.leaseTransitions ?? 0,
    drainedFor: l.metadata?.annotations?.['shard.kubeloop.dev/drained-for'],
    at: Date.now(),
  });
}

// ---- the replicas ---------------------------------------------------------------------------------------------
function kubeconfig(port) {
  const ca = Buffer.from(cp.config.tlsClientConfig.caData).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: c\n  cluster:\n    server: https://127.0.0.1:${port}\n    certificate-authority-data: ${ca}`,
    `users:\n- name: u\n  user:\n    token: ${cp.config.bearerToken}`,
    'contexts:\n- name: x\n  context:\n    cluster: c\n    user: u',
    'current-context: x',
    '',
  ].join('\n');
}
const timing = [
  `--leader-elect-lease-duration=${values.lease}`,
  `--leader-elect-renew-deadline=${values.renew}`,
  `--leader-elect-retry-period=${values.retry}`,
];
for (const group of ['le', 'sh'])
  for (let i = 0; i < 3; i++) {
    const proxy = await FaultProxy.start({ targetPort: apiPort });
    const file = join(work, `${group}-r${i}.kubeconfig`);
    writeFileSync(file, kubeconfig(proxy.port), { mode: 0o600 });
    const args =
      group === 'le'
        ? ['--leader-elect', `--leader-election-namespace=${LE_NS}`, `--leader-election-id=${LE_NAME}`]
        : ['--shards', `--shard-namespace=${LE_NS}`, `--shard-name=${SHARD_NAME}`];
    replicas.push({
      name: `${group}-r${i}`,
      group,
      proxy,
      file,
      args,
      child: undefined,
      events: [],
      starts: 0,
    });
  }
let stopping = false;
function startReplica(r) {
  r.starts++;
  const child = spawn(
    process.execPath,
    [
      CLI,
      `--kubeconfig=${r.file}`,
      ...r.args,
      ...timing,
      ...KEYS.flatMap((k) => ['--namespace', k]),
      '--metrics-bind-address=0',
      '--health-probe-bind-address=0',
      '--log-format=json',
      '--log-level=info',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOSTNAME: r.name } },
  );
  r.child = child;
  const out = [];
  let buf = '';
  const onData = (chunk) => {
    buf += chunk;
    let nl = buf.indexOf('\n');
    while (nl >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      out.push(line);
      onLine(r, line);
      nl = buf.indexOf('\n');
    }
  };
  child.stdout.setEncoding('utf8').on('data', onData);
  child.stderr.setEncoding('utf8').on('data', onData);
  r.events.push({ kind: 'start', at: Date.now(), pid: child.pid });
  child.on('exit', (code, sig) => {
    r.events.push({ kind: 'exit', at: Date.now(), code, sig });
    writeFileSync(join(work, `${r.name}.${r.starts}.log`), out.join('\n'));
    r.child = undefined;
    if (!stopping) setTimeout(() => startReplica(r), 500).unref();
  });
}
function onLine(r, line) {
  let e;
  try {
    e = JSON.parse(line);
  } catch {
    return;
  }
  const at = typeof e.time === 'number' ? e.time : Date.parse(e.time);
  if (e.msg === 'became leader, starting leader-only runnables') r.events.push({ kind: 'leader', at });
  else if (e.msg === 'failed to renew lease, stopped leading') r.events.push({ kind: 'lost', at });
  else if (e.msg === 'pod count of an owned namespace')
    r.events.push({ kind: 'reconcile', at, key: e.namespace });
  else if (e.msg === 'Starting shard membership') r.events.push({ kind: 'member', at });
}
for (const r of replicas) startReplica(r);

// ---- steady states and faults ---------------------------------------------------------------------------------
const latest = () => {
  const m = new Map();
  for (const h of history)
    if (h.type === 'DELETED') m.delete(h.name);
    else m.set(h.name, h);
  return m;
};
function leHolder() {
  const l = latest().get(LE_NAME);
  if (!l?.holder || !l.renewTime || Date.now() - l.renewTime > T.renewMs) return undefined;
  return l;
}
function shardsSteady() {
  const now = Date.now();
  const live = [...latest().values()].filter(
    (h) =>
      h.name.startsWith(`${SHARD_NAME}-shard-`) && h.holder && h.renewTime && now - h.renewTime < T.renewMs,
  );
  if (live.length !== 3) return false;
  const ids = live
    .map((h) => h.holder)
    .sort()
    .join(',');
  return live.every((h) => h.drainedFor === ids);
}
function leaderReplica() {
  // the running le replica that most recently became leader
  let best;
  for (const r of replicas.filter((x) => x.group === 'le' && x.child)) {
    const lastStart = r.events.findLast((e) => e.kind === 'start').at;
    const led = r.events.findLast((e) => e.kind === 'leader' && e.at >= lastStart);
    if (led && (!best || led.at > best.at)) best = { r, at: led.at };
  }
  return best?.r;
}
// A stop (SIGINT/SIGTERM, --minutes) ends the waits between rounds at once (`stoppable`), never a wait inside a
// round: the round in flight is finished, so every round in the table is a whole one.
class Stopped extends Error {}
async function until(cond, ms, what, stoppable = false) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (stoppable && deadline === 0) throw new Stopped('stopped');
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
const roundsLog = []; // { kind, i, start, end, leBefore, shardVictims }
async function steady() {
  await until(
    () => leHolder() && shardsSteady() && replicas.every((r) => r.child) && leaderReplica(),
    240_000,
    'a leader and three acknowledged shard members',
    true,
  );
}

const tStart = Date.now();
// The box is shared: the 1-minute load average is sampled through the run and printed with the figures.
const loads = [loadavg()[0]];
setInterval(() => loads.push(loadavg()[0]), 30_000).unref();
deadline = Math.min(deadline, tStart + Number(values.minutes) * 60_000);
roundsStarted = true;
let unsteady = 0;
try {
  // Rounds go pause, restart, partition, pause, …: a run cut short by --minutes still has all kinds alike.
  for (let i = 0; i < rounds && Date.now() < deadline; i++)
    for (const kind of faultKinds) {
      if (Date.now() >= deadline) break;
      try {
        await steady();
      } catch (e) {
        if (e instanceof Stopped) break;
        unsteady++;
        say(`${kind} ${i + 1}: not steady within 240 s, round skipped`);
        continue;
      }
      await sleep(T.retryMs * 2);
      const before = leHolder();
      if (!before) continue;
      const victim = replicas.filter((r) => r.group === 'sh')[i % 3];
      const round = { kind, i, start: Date.now(), leHolder: before.holder, leAcquire: before.acquireTime };
      if (kind === 'pause') {
        cp.pauseApiServer();
        await sleep(T.renewMs + 1000);
        cp.resumeApiServer();
      } else if (kind === 'restart') {
        await cp.restartApiServer();
      } else {
        const leader = leaderReplica();
        round.partitioned = [leader.name, victim.name];
        round.shardVictim = victim.name;
        leader.proxy.partition();
        victim.proxy.partition();
        // until another replica leads and the other two members acknowledged each other without the victim
        await until(
          () => {
            const l = latest().get(LE_NAME);
            const others = [...latest().values()].filter(
              (h) =>
                h.name.startsWith(`${SHARD_NAME}-shard-`) &&
                h.holder &&
                !h.holder.startsWith(`${victim.name}-`),
            );
            const acked =
              others.length > 0 &&
              others.every((h) => h.drainedFor && !h.drainedFor.includes(`${victim.name}-`));
            return l && l.holder !== before.holder && acked;
          },
          60_000,
          'the hand-over away from the partitioned replicas',
        ).catch((e) => {
          round.error = e.message;
        });
        leader.proxy.heal();
        victim.proxy.heal();
      }
      round.end = Date.now();
      roundsLog.push(round);
      await until(
        () => {
          const l = leHolder();
          return l && l.renewTime > round.end;
        },
        60_000,
        'a leader renewing after the fault',
      ).catch((e) => {
        round.error = e.message;
      });
      say(
        `${kind} ${i + 1}/${rounds} (${Math.round((Date.now() - round.start) / 100) / 10} s)${round.error ? ` ${round.error}` : ''}`,
      );
    }
  if (roundsLog.length + unsteady < rounds * faultKinds.length)
    stoppedEarly ??= historyLost ? 'the lost Lease history' : `--minutes ${values.minutes}`;
  await sleep(T.leaseMs + 1000);
} finally {
  stopping = true;
  for (const r of replicas) r.child?.kill('SIGTERM');
  await sleep(3000);
  watchStop.abort();
  for (const r of replicas) await r.proxy.close();
  await admin.close();
  await cp.stop();
}

const result = analyse({
  history,
  replicas,
  rounds: roundsLog,
  T,
  leName: LE_NAME,
  shardName: SHARD_NAME,
  keys: KEYS,
});
writeFileSync(
  join(work, 'history.json'),
  JSON.stringify({
    history,
    rounds: roundsLog,
    replicas: replicas.map((r) => ({ name: r.name, events: r.events })),
  }),
);
const minutes = Math.round((Date.now() - tStart) / 60_000);
const table = renderTable(result);
console.log(table);
if (values.write) {
  const file = resolve(values.write);
  const text = readFileSync(file, 'utf8');
  const begin = '<!-- realk8s-leader-election:begin -->';
  const end = '<!-- realk8s-leader-election:end -->';
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  if (a < 0 || b < a) throw new Error(`${file} has no ${begin} … ${end} section`);
  writeFileSync(file, `${text.slice(0, a + begin.length)}\n${table}\n${text.slice(b)}`);
  say(`wrote the table into ${file}`);
}
if (!values.logs) rmSync(work, { recursive: true, force: true });
if (historyLost) console.error(`FAIL: ${historyLost}`);
process.exit(result.safe && !historyLost ? 0 : 1);

function renderTable(r) {
  const fmt = (ms) => (ms === undefined ? '—' : `${(ms / 1000).toFixed(2)} s`);
  const bound = T.leaseMs + 1.2 * T.retryMs;
  const lines = [
    `Run of ${new Date(tStart).toISOString().slice(0, 16).replace('T', ' ')}–${new Date().toISOString().slice(11, 16)} UTC: kube-apiserver ${version}, ${minutes} min, ` +
      `load average ${Math.round(Math.min(...loads))}–${Math.round(Math.max(...loads))} (1-minute, sampled every 30 s), ` +
      `${stoppedEarly ? `**stopped by ${stoppedEarly} before the ${rounds} rounds asked**, ` : ''}` +
      `lease ${T.leaseMs / 1000} s / renew deadline ${T.renewMs / 1000} s / retry ${T.retryMs / 1000} s, ` +
      `${r.writes} Lease writes recorded (watch resumed ${watchRestarts} times), ${r.restarts} replica restarts${unsteady ? `, ${unsteady} rounds skipped (not steady within 240 s)` : ''}. ` +
      '`node scripts/realk8s-leader-election.mjs --assets <dir> --write docs/reliability.md`.',
    '',
    '| group | fault | rounds | max at once (Lease history) | max at once (processes) | failover / hand-over p50 | p99 | max | bound |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const k of faultKinds) {
    const le = r.le.byKind[k] ?? { n: 0, failovers: [] };
    const sh = r.sh.byKind[k] ?? { n: 0, handovers: [] };
    lines.push(
      `| leader election | ${k} | ${le.n} | ${r.le.maxLeaders} | ${r.le.maxProcessLeaders} | ${fmt(percentile(le.failovers, 50))} | ${fmt(percentile(le.failovers, 99))} | ${fmt(Math.max(...le.failovers, 0))} | ${k === 'partition' ? fmt(bound) + ' after the last renew' : 'server down + ' + fmt(bound)} |`,
      `| sharding | ${k} | ${sh.n} | ${r.sh.maxOwners} per key | ${r.sh.conflicting} reconciles while another member owned the key | ${fmt(percentile(sh.handovers, 50))} | ${fmt(percentile(sh.handovers, 99))} | ${fmt(Math.max(...sh.handovers, 0))} | — |`,
    );
  }
  lines.push('', ...r.notes.map((n) => `- ${n}`));
  return lines.join('\n');
}
