// Two pod-counter processes with --leader-elect against one API server: exactly one reconciles; SIGKILL on
// the leader (no release) hands over to the other once the Lease expires. Lease timings are shortened by
// flags (2 s / 1.5 s / 0.5 s) so the test takes seconds.
import { type ChildProcess, spawn } from 'node:child_process';
import { Pod } from '@kubeloop/client';
import { describe, expect, inject, it } from 'vitest';
import { podCounterCli as cli } from './support/pod-counter-cli.js';
import { podManifest, useLiveCluster, waitFor } from './support.js';

const LEASE_S = 2;
const RENEW_S = 1.5;
const RETRY_S = 0.5;

interface Replica {
  readonly name: string;
  readonly child: ChildProcess;
  /** `pod count` records with the time they were read. */
  readonly counts: Array<{ at: number; count: number }>;
  /** When this replica logged that it became leader (ms since the epoch, read time). */
  ledAt?: number;
  readonly exited: Promise<number | null>;
}

function startReplica(name: string, ns: string): Replica {
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
  const counts: Replica['counts'] = [];
  let buffered = '';
  child.stdout?.on('data', (d: Buffer) => {
    buffered += d.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      const rec = JSON.parse(line) as { msg: string; count?: number };
      if (rec.msg === 'pod count') counts.push({ at: Date.now(), count: rec.count as number });
      if (rec.msg.startsWith('became leader')) replica.ledAt ??= Date.now();
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const replica: Replica = { name, child, counts, exited };
  return replica;
}

describe('pod-counter --leader-elect (two replicas as subprocesses)', () => {
  const live = useLiveCluster();

  it('exactly one replica reconciles; SIGKILL on the leader hands over within leaseDuration + retryPeriod', async () => {
    const { api, ns } = await live.namespace('pc-le');
    await api.create(Pod, podManifest(ns, 'p1'));

    const a = startReplica('a', ns);
    live.cleanups.push(async () => {
      a.child.kill('SIGKILL');
      await a.exited;
    });
    await waitFor(() => a.counts.length > 0, 'replica a to lead and count', 30_000);
    const b = startReplica('b', ns);
    live.cleanups.push(async () => {
      b.child.kill('SIGKILL');
      await b.exited;
    });

    // While a leads, changes are counted by a only.
    for (const n of ['p2', 'p3']) await api.create(Pod, podManifest(ns, n));
    await waitFor(() => a.counts.at(-1)?.count === 3, 'a to count 3 pods');
    // b has had time to start and campaign (several retry periods) without ever reconciling.
    await waitFor(() => Date.now() - (a.counts.at(-1)?.at ?? 0) > 4 * RETRY_S * 1000, 'b to campaign');
    expect(b.counts).toEqual([]);

    // SIGKILL: no release; b must wait for the lease to expire on its own clock, then take over.
    const killedAt = Date.now();
    a.child.kill('SIGKILL');
    await a.exited;
    await api.create(Pod, podManifest(ns, 'p4'));
    await waitFor(() => b.counts.some((c) => c.count === 4), 'b to take over and count 4 pods', 30_000);
    const handover = (b.ledAt ?? Number.NaN) - killedAt;
    const firstCount = (b.counts[0]?.at ?? Number.NaN) - killedAt;
    process.stdout.write(
      `pod-counter handover after SIGKILL: leader after ${handover} ms, first count after ${firstCount} ms\n`,
    );
    // The bound: the lease duration after b last saw a's renewal (at most one jittered retry period after
    // the kill), then one jittered retry period to acquire — client-go's acquire loop waits
    // retryPeriod × (1 + 1.2 × random) — plus one lease-request timeout (1 s) and 2 s of slack for a
    // loaded CI box reading the child's log.
    const retryMax = RETRY_S * 2.2;
    expect(handover).toBeLessThan((retryMax + LEASE_S + retryMax + 1 + 2) * 1000);
    expect(b.counts.length).toBeGreaterThan(0);
  });
});
