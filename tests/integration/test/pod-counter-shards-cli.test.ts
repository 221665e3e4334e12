import { existsSync } from 'node:fs';
import { LeaseKind } from '@kubeloop/builder/leaderelection';
import { Pod } from '@kubeloop/client';
import { describe, expect, inject, it } from 'vitest';
import { podCounterCli as cli, jsonLogRecords, runPodCounter as run } from './support/pod-counter-cli.js';
import { podManifest, useLiveCluster } from './support.js';

/** The namespaces a replica reported as owned, from its JSON log lines. */
function ownedNamespaces(stdout: string): Set<string> {
  return new Set(
    jsonLogRecords<{ msg: string; namespace?: string }>(stdout)
      .filter((r) => r.msg === 'pod count of an owned namespace' && r.namespace)
      .map((r) => r.namespace as string),
  );
}

describe('pod-counter --shards as two processes (issue 15 item 6)', () => {
  const live = useLiveCluster();

  it('two replicas count every namespace between them, exit 0 after --duration and delete their member Leases', async () => {
    expect(existsSync(cli), `${cli} must be built (npm test builds it first)`).toBe(true);
    const spaces = await Promise.all(['sh-a', 'sh-b', 'sh-c', 'sh-d'].map((p) => live.namespace(p)));
    for (const { api, ns } of spaces) await api.create(Pod, podManifest(ns, 'p'));
    const leaseNs = spaces[0]!.ns;
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
      '3',
      '--leader-elect-renew-deadline',
      '2',
      '--leader-elect-retry-period',
      '0.5',
      '--metrics-bind-address',
      '127.0.0.1:0',
      '--health-probe-bind-address',
      '127.0.0.1:0',
      '--duration',
      '8',
    ];
    const [a, b] = await Promise.all([run(args()), run(args())]);
    expect(a?.code, a?.stderr).toBe(0);
    expect(b?.code, b?.stderr).toBe(0);
    const union = new Set([...ownedNamespaces(a?.stdout ?? ''), ...ownedNamespaces(b?.stdout ?? '')]);
    expect([...union].sort()).toEqual(spaces.map((s) => s.ns).sort());
    const leases = await spaces[0]!.api.list(LeaseKind, {
      namespace: leaseNs,
      labelSelector: 'shard.kubeloop.dev/name=pc',
    });
    expect(leases.items).toEqual([]);
  }, 60_000);
});
