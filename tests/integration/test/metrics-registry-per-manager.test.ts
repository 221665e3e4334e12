import { type Manager, metricsRegistry, newManager } from '@kubeloop/builder';
import { describe, expect, it } from 'vitest';
import { testConfig, useLiveCluster, waitFor } from './support.js';

// Two managers in one process (a leader and a standby on one Lease) used to share the process-wide registry, so
// the standby's leader_election_master_status 0 overwrote the leader's 1. Each manager now has its own registry
// unless one is given; the process-wide one is opt-in.

async function scrape(mgr: Manager): Promise<string> {
  const res = await fetch(`http://${mgr.metricsServerAddress()}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

describe('one metrics registry per manager', () => {
  const live = useLiveCluster();

  it('a leader and a standby in one process each serve their own leader_election_master_status on /metrics', async () => {
    const { ns } = await live.namespace('metrics-reg');
    const start = (identity: string) => {
      const mgr = newManager(testConfig(), {
        cache: { defaultNamespaces: [ns] },
        // The metric under test is the manager's own elector's, so that elector runs on the real clock; nothing
        // here waits for an expiry, so the lease and renew deadline are long enough (60 s / 45 s) that a process
        // starved of CPU for tens of seconds still renews in time and the leader does not stop with
        // LeaderElectionLostError before the scrape.
        leaderElection: {
          id: 'lock',
          namespace: ns,
          identity,
          leaseDurationMs: 60_000,
          renewDeadlineMs: 45_000,
          retryPeriodMs: 500,
        },
        metrics: { bindAddress: '127.0.0.1:0' },
      });
      const stop = new AbortController();
      const done = mgr.start(stop.signal);
      live.cleanups.push(async () => {
        stop.abort();
        await done;
      });
      return mgr;
    };
    const leader = start('leader');
    await leader.elected();
    const standby = start('standby');
    await waitFor(
      async () => (await scrape(standby)).includes('leader_election_master_status{name="lock"} 0'),
      'the standby campaigning',
    );
    expect(leader.getMetricsRegistry()).not.toBe(standby.getMetricsRegistry());
    expect(leader.getMetricsRegistry()).not.toBe(metricsRegistry);
    expect(await scrape(leader)).toContain('leader_election_master_status{name="lock"} 1');
    expect(await scrape(standby)).toContain('leader_election_master_status{name="lock"} 0');
    // The process-wide registry got nothing from them.
    expect(await metricsRegistry.metrics()).not.toContain('leader_election_master_status{name="lock"}');
  });

  it('the process-wide registry is opt-in: a manager given it serves it', async () => {
    const mgr = newManager(testConfig(), { metrics: { registry: metricsRegistry } });
    expect(mgr.getMetricsRegistry()).toBe(metricsRegistry);
  });
});
