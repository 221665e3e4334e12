import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LeaseKind } from '@kubeloop/builder/leaderelection';
import { Pod } from '@kubeloop/client';
import { describe, expect, inject, it } from 'vitest';
import { podManifest, useLiveCluster } from './support.js';

const cli = fileURLToPath(new URL('../../../apps/pod-counter/dist/cli.js', import.meta.url));

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The namespaces a replica reported as owned, from its JSON log lines. */
function ownedNamespaces(stdout: string): Set<string> {
  return new Set(
    stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; namespace?: string })
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
