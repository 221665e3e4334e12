import type { Logger } from '@kubeloop/builder';
import { Namespace, newClient, Pod } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseCli, UsageError } from '../src/cli-options.js';
import { runPodCounter } from '../src/index.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

/** `pod_counter_pods` samples of one registry: namespace → pods. */
async function countsOf(registry: Registry): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const metric = await registry.getSingleMetric('pod_counter_pods')?.get();
  for (const v of metric?.values ?? []) {
    const ns = String(v.labels.namespace);
    out.set(ns, (out.get(ns) ?? 0) + v.value);
  }
  return out;
}

describe('pod-counter --shards', () => {
  it('parses --shards with its name and Lease namespace, and refuses it with --leader-elect, --report-configmap or without a namespace outside a cluster', () => {
    const ok = parseCli(['--shards', '--shard-namespace', 'ops', '--shard-name', 'pc'], '0.0.0');
    expect(ok.kind === 'run' && ok.options).toMatchObject({
      shards: true,
      shardName: 'pc',
      shardNamespace: 'ops',
    });
    const plain = parseCli([], '0.0.0');
    expect(plain.kind === 'run' && plain.options).toMatchObject({ shards: false, shardName: 'pod-counter' });
    for (const [argv, message] of [
      [
        ['--shards', '--shard-namespace', 'ops', '--leader-elect', '--leader-election-namespace', 'ops'],
        /--leader-elect/,
      ],
      [['--shards', '--shard-namespace', 'ops', '--report-configmap', 'ops/r'], /--report-configmap/],
      [['--shards'], /--shard-namespace/],
    ] as const) {
      expect(() => parseCli([...argv], '0.0.0')).toThrow(UsageError);
      expect(() => parseCli([...argv], '0.0.0')).toThrow(message);
    }
    const help = parseCli(['--help'], '0.0.0');
    expect(help.kind === 'print' && help.text).toMatch(/--shards/);
  });

  describe('two replicas on envtest', () => {
    let server: ApiServer;
    let config: RestConfig;
    beforeAll(async () => {
      server = await startApiServer();
      config = {
        host: server.url,
        tlsClientConfig: { caData: server.caPem },
        bearerToken: server.token,
        qps: -1,
        burst: 0,
        timeoutMs: 0,
        userAgent: 'pod-counter-shards-test',
      };
    });
    afterAll(async () => {
      await server?.stop();
    });

    it('each namespace is counted by exactly one replica and the sum over the replicas is every pod', async () => {
      const api = newClient(config);
      const namespaces = ['sa', 'sb', 'sc', 'sd', 'se', 'sf'];
      let total = 0;
      for (const [i, ns] of namespaces.entries()) {
        await api.create(Namespace, { metadata: { name: ns } });
        for (let k = 0; k <= i; k++) {
          await api.create(Pod, {
            metadata: { namespace: ns, name: `p${k}` },
            spec: { containers: [{ name: 'c', image: 'busybox' }] },
          });
          total++;
        }
      }
      const replicas = ['r1', 'r2'].map((identity) => {
        const stop = new AbortController();
        const registry = new Registry();
        const done = runPodCounter(config, {
          signal: stop.signal,
          logger: quiet,
          metricsRegistry: registry,
          sharding: {
            namespace: 'sa',
            identity,
            leaseDurationMs: 3000,
            renewDeadlineMs: 2000,
            retryPeriodMs: 200,
          },
        });
        return { stop, registry, done };
      });
      try {
        await vi.waitFor(
          async () => {
            const [a, b] = await Promise.all(replicas.map((r) => countsOf(r.registry)));
            const both = [...(a?.keys() ?? [])].filter((ns) => b?.has(ns));
            expect(both).toEqual([]);
            const sum = [...(a?.values() ?? []), ...(b?.values() ?? [])].reduce((x, y) => x + y, 0);
            expect(sum).toBe(total);
            // Both replicas took part (6 namespaces over 2 members).
            expect(a?.size).toBeGreaterThan(0);
            expect(b?.size).toBeGreaterThan(0);
          },
          { timeout: 20_000, interval: 100 },
        );
      } finally {
        for (const r of replicas) r.stop.abort();
        await Promise.all(replicas.map((r) => r.done));
        await api.close();
      }
    }, 40_000);
  });
});
