import { existsSync } from 'node:fs';
import { LeaseKind } from '@kubeloop/builder/leaderelection';
import { Pod } from '@kubeloop/client';
import { describe, expect, inject, it } from 'vitest';
import { podCounterCli as cli, jsonLogRecords, startPodCounter } from './support/pod-counter-cli.js';
import { podManifest, useLiveCluster, waitFor } from './support.js';

/** The namespaces a replica reported as owned, from its JSON log lines. */
function ownedNamespaces(stdout: string): Set<string> {
  return new Set(
    jsonLogRecords<{ msg: string; namespace?: string }>(stdout)
      .filter((r) => r.msg === 'pod count of an owned namespace' && r.namespace)
      .map((r) => r.namespace as string),
  );
}

describe('pod-counter --shards as two processes', () => {
  const live = useLiveCluster();

  it('two replicas count every namespace between them, exit 0 on SIGTERM and delete their member Leases', async () => {
    expect(existsSync(cli), `${cli} must be built (npm test builds it first)`).toBe(true);
    const spaces = await Promise.all(['sh-a', 'sh-b', 'sh-c', 'sh-d'].map((p) => live.namespace(p)));
    for (const { api, ns } of spaces) await api.create(Pod, podManifest(ns, 'p'));
    const leaseNs = spaces[0]!.ns;
    // Roomy lease timings (a member Lease request times out after half the renew deadline, and the release
    // on stop after one retry period): under load short ones fence healthy replicas and cut the release
    // short (a 1 s retry period left a Lease behind at load 14), which this test is not about. The replicas are stopped by
    // SIGTERM once they have counted, not by a wall-clock --duration that a slow start could outlast.
    const args = () => [
      '--kubeconfig',
      inject('kubeconfigPath'),
      ...spaces.flatMap(({ ns }) => ['--namespace', ns]),
      '--shards',
      '--shard-namespace',
      leaseNs,
      '--shard-name',
      'pc',
      '--leader-elect-lease-duration',
      '15',
      '--leader-elect-renew-deadline',
      '10',
      '--leader-elect-retry-period',
      '3',
      '--metrics-bind-address',
      '127.0.0.1:0',
      '--health-probe-bind-address',
      '127.0.0.1:0',
    ];
    const replicas = [startPodCounter(args()), startPodCounter(args())];
    const union = () => [...new Set(replicas.flatMap((r) => [...ownedNamespaces(r.stdout())]))].sort();
    const memberLeases = async () =>
      (
        await spaces[0]!.api.list(LeaseKind, {
          namespace: leaseNs,
          labelSelector: 'shard.kubeloop.dev/name=pc',
        })
      ).items.length;
    try {
      // Both replicas are members (each wrote its Lease, so each is past start-up and handles SIGTERM) and
      // every namespace was counted by one of them.
      await waitFor(
        async () => union().length === spaces.length && (await memberLeases()) === 2,
        () => `two member Leases and every namespace counted (so far ${union().join(', ')})`,
        45_000,
      );
    } finally {
      for (const r of replicas) r.kill();
    }
    const [a, b] = await Promise.all(replicas.map((r) => r.exited));
    expect(a?.code, a?.stderr).toBe(0);
    expect(b?.code, b?.stderr).toBe(0);
    expect(union()).toEqual(spaces.map((s) => s.ns).sort());
    const releases = [a, b].map((r) =>
      jsonLogRecords(r?.stdout ?? '')
        .filter((l) => /member Lease/.test(l.msg))
        .map((l) => l.msg),
    );
    expect(await memberLeases(), JSON.stringify(releases)).toBe(0);
  }, 90_000);
});
