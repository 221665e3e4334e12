// Two pod-counter processes with --leader-elect against one API server: exactly one reconciles; SIGKILL on
// the leader (no release) hands over to the other once the Lease expires. Lease timings are shortened by
// flags (6 s / 4 s / 1 s) so the test takes seconds; not shorter, because on a loaded CI box a leader whose
// renewals took over 1.5 s lost a 2 s / 1.5 s lease and exited 1 before it had counted (seen at load 14).
import { type ChildProcess, spawn } from 'node:child_process';
import { Pod } from '@kubeloop/client';
import { describe, expect, inject, it } from 'vitest';
import { podCounterCli as cli } from './support/pod-counter-cli.js';
import { podManifest, useLiveCluster, waitFor } from './support.js';

const LEASE_S = 6;
const RENEW_S = 4;
const RETRY_S = 1;

/** What the replicas did, in the order the test saw it (one log shared by both replicas). */
type Happening =
  | { replica: string; kind: 'count'; count: number }
  | { replica: string; kind: 'observed'; leader: string }
  | { replica: string; kind: 'led' | 'exited' };

interface Replica {
  readonly name: string;
  readonly child: ChildProcess;
  /** The `pod count` values this replica logged, in order. */
  readonly counts: number[];
  readonly exited: Promise<number | null>;
}

function startReplica(name: string, ns: string, log: Happening[]): Replica {
  const child = spawn(
    process.execPath,
    [
      cli,
      '--kubeconfig',
      inject('kubeconfigPath'),
      '--namespace',
      ns,
      '--leader-elect',
      '--leader-election-namespace',
      ns,
      '--leader-election-id',
      'pod-counter-le-test',
      '--leader-elect-lease-duration',
      String(LEASE_S),
      '--leader-elect-renew-deadline',
      String(RENEW_S),
      '--leader-elect-retry-period',
      String(RETRY_S),
      '--metrics-bind-address',
      '0',
      '--health-probe-bind-address',
      '0',
      '--log-format',
      'json',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const counts: number[] = [];
  let buffered = '';
  child.stdout?.on('data', (d: Buffer) => {
    buffered += d.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      const rec = JSON.parse(line) as { msg: string; count?: number; leader?: string };
      if (rec.msg === 'pod count') {
        counts.push(rec.count as number);
        log.push({ replica: name, kind: 'count', count: rec.count as number });
      }
      if (rec.msg.startsWith('became leader')) log.push({ replica: name, kind: 'led' });
      if (rec.msg === 'new leader observed')
        log.push({ replica: name, kind: 'observed', leader: String(rec.leader) });
    }
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      log.push({ replica: name, kind: 'exited' });
      resolve(code);
    }),
  );
  return { name, child, counts, exited };
}

describe('pod-counter --leader-elect (two replicas as subprocesses)', () => {
  const live = useLiveCluster();

  it('exactly one replica reconciles at a time; after SIGKILL on the leader the other takes over and reconciles', async () => {
    const { api, ns } = await live.namespace('pc-le');
    await api.create(Pod, podManifest(ns, 'p1'));
    const log: Happening[] = [];

    const a = startReplica('a', ns, log);
    live.cleanups.push(async () => {
      a.child.kill('SIGKILL');
      await a.exited;
    });
    await waitFor(() => a.counts.length > 0, 'replica a to lead and count', 30_000);
    const b = startReplica('b', ns, log);
    live.cleanups.push(async () => {
      b.child.kill('SIGKILL');
      await b.exited;
    });
    // b campaigns, reads the Lease and sees that another identity holds it.
    await waitFor(
      () => log.some((h) => h.replica === 'b' && h.kind === 'observed'),
      'b to observe the current leader',
      30_000,
    );

    // While a leads, changes are counted by a only.
    for (const n of ['p2', 'p3']) await api.create(Pod, podManifest(ns, n));
    await waitFor(() => a.counts.at(-1) === 3, 'a to count 3 pods');
    expect(b.counts).toEqual([]);
    expect(log.some((h) => h.replica === 'b' && h.kind === 'led')).toBe(false);

    // SIGKILL: no release; b must wait for the lease to expire on its own clock, then take over.
    a.child.kill('SIGKILL');
    await a.exited;
    await api.create(Pod, podManifest(ns, 'p4'));
    await waitFor(() => b.counts.includes(4), 'b to take over and count 4 pods', 30_000);

    // One at a time: every count of a precedes its exit, and b led and counted only after a had exited.
    const at = (pred: (h: Happening) => boolean) => log.findIndex(pred);
    const aExit = at((h) => h.replica === 'a' && h.kind === 'exited');
    const bLed = at((h) => h.replica === 'b' && h.kind === 'led');
    const bFirstCount = at((h) => h.replica === 'b' && h.kind === 'count');
    const aLastCount = log.findLastIndex((h) => h.replica === 'a' && h.kind === 'count');
    expect(aExit).toBeGreaterThan(aLastCount);
    expect(bLed).toBeGreaterThan(aExit);
    expect(bFirstCount).toBeGreaterThan(bLed);
  });
});
