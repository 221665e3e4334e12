// Leader election under faults: three electors on one Lease; each round takes the leader
// out — stopped without release (what a SIGKILL looks like to the Lease), partitioned by envtest failing its
// requests with 503, or partitioned by envtest black-holing them — and measures how many lead at once
// (each judged by its own leadership signal, which ends at most renewDeadline after its last renew) and
// how long until another leads. CI runs LE_ROUNDS=3 (one of each); the full run is LE_ROUNDS=50.

import { randomBytes } from 'node:crypto';
import { LeaderElector, newResourceLock } from '@kubeloop/builder/leaderelection';
import type { RestConfig } from '@kubeloop/config';
import { onAbort } from '@kubeloop/core';
import { describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';

const ROUNDS = Number(process.env.LE_ROUNDS ?? 3);
const LEASE_MS = 2000;
const RENEW_MS = 1500;
const RETRY_MS = 400;
const REQUEST_TIMEOUT_MS = 1000;
/** leaseDuration + retryPeriod + one request timeout (+ the acquire jitter client-go adds to the retry). */
const FAILOVER_BOUND_MS = LEASE_MS + RETRY_MS * 1.2 + REQUEST_TIMEOUT_MS;

type Mode = 'stop' | 'fail' | 'blackhole';

interface Member {
  id: string;
  token: string;
  stop: AbortController;
  run: Promise<void>;
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? Number.NaN;
}

describe.skipIf(realCluster)('leader election under faults', () => {
  const ctx = useFaultServer('kubeloop-chaos-le');

  it(`${ROUNDS} rounds of stopping or partitioning the leader: never two leaders, a new leader every round`, {
    timeout: 60_000 + ROUNDS * 10_000,
  }, async () => {
    const leaseName = `chaos-le-${randomBytes(3).toString('hex')}`;
    const leading = new Set<string>();
    let maxLeaders = 0;
    let faultAt = 0;
    let faulted = '';
    const failovers: number[] = [];
    let generation = 0;

    const start = (slot: number): Member => {
      const id = `m${slot}-${++generation}`;
      const token = randomBytes(16).toString('hex');
      ctx.server.auth.addToken(token, { user: `le-${id}`, groups: ['system:masters'] });
      const config: RestConfig = { ...ctx.config, bearerToken: token };
      const lock = newResourceLock(config, {
        id: leaseName,
        namespace: 'default',
        identity: id,
        renewDeadlineMs: RENEW_MS,
        requestTimeoutMs: REQUEST_TIMEOUT_MS,
      });
      const elector = new LeaderElector({
        lock,
        leaseDurationMs: LEASE_MS,
        renewDeadlineMs: RENEW_MS,
        retryPeriodMs: RETRY_MS,
        callbacks: {
          onStartedLeading(signal) {
            leading.add(id);
            maxLeaders = Math.max(maxLeaders, leading.size);
            if (faultAt > 0 && id !== faulted) {
              failovers.push(Date.now() - faultAt);
              faultAt = 0;
            }
            onAbort(signal, () => leading.delete(id));
          },
        },
      });
      const stop = new AbortController();
      return { id, token, stop, run: elector.run(stop.signal).catch(() => undefined) };
    };

    const members = [start(0), start(1), start(2)];
    const leader = async (): Promise<number> => {
      for (;;) {
        const i = members.findIndex((m) => leading.has(m.id));
        if (i >= 0 && leading.size === 1) return i;
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    const modes: Mode[] = ['stop', 'fail', 'blackhole'];
    const seen: Record<Mode, number> = { stop: 0, fail: 0, blackhole: 0 };
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const i = await leader();
        const victim = members[i]!;
        const mode = modes[round % modes.length]!;
        seen[mode]++;
        faulted = victim.id;
        faultAt = Date.now();
        if (mode === 'stop') victim.stop.abort();
        else if (mode === 'fail')
          ctx.server.faults.failRequests({ match: { token: victim.token }, status: 503 });
        else ctx.server.faults.blackhole({ match: { token: victim.token } });
        // Someone else leads.
        while (faultAt > 0) await new Promise((r) => setTimeout(r, 25));
        // Heal: the partitioned process is replaced, as a restarted pod would be.
        victim.stop.abort();
        ctx.server.faults.reset();
        ctx.server.faults.releaseBlackholes(true);
        await victim.run;
        members[i] = start(i);
      }
    } finally {
      for (const m of members) m.stop.abort();
      await Promise.all(members.map((m) => m.run));
    }
    const figures = {
      rounds: ROUNDS,
      modes: seen,
      maxSimultaneousLeaders: maxLeaders,
      failoverP50Ms: percentile(failovers, 50),
      failoverP99Ms: percentile(failovers, 99),
      boundMs: FAILOVER_BOUND_MS,
      withinBound: percentile(failovers, 99) <= FAILOVER_BOUND_MS,
    };
    console.log(`leader election: ${JSON.stringify(figures)}`);
    expect(failovers).toHaveLength(ROUNDS);
    expect(maxLeaders).toBe(1);
    // The failover time is a figure (printed, recorded in docs/reliability.md), not asserted: on a shared CI
    // box wall-clock bounds flake. A failover that never happens ends the test at its timeout.
  });
});
