import { type ApiClient, Namespace, newClient } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { type ApiServer, type ApiServerOptions, startApiServer } from '@kubeloop/envtest';
import { afterAll, afterEach, beforeAll } from 'vitest';

/** One in-process API server of a multi-cluster test. */
export interface TestCluster {
  readonly name: string;
  server: ApiServer;
  /** Admin config: no client-side limiter, a 30 s request timeout. */
  config: RestConfig;
  /** An unthrottled admin client for setup and checks. */
  api: ApiClient;
}

/** A kubeconfig (JSON, which is YAML) for `server`, with its CA and admin token inline. */
export function kubeconfigText(server: ApiServer, token = server.token): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'c',
        cluster: {
          server: server.url,
          'certificate-authority-data': Buffer.from(server.caPem).toString('base64'),
        },
      },
    ],
    users: [{ name: 'u', user: { token } }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'ctx',
  });
}

/**
 * Starts one in-process API server per name for the calling `describe` block (in-process servers always,
 * also under USE_EXISTING_CLUSTER: a fleet of clusters is what the tests are about); faults are reset and
 * cleanups run after each test.
 */
export function useClusters(
  names: readonly string[],
  serverOptions: ApiServerOptions = {},
): {
  readonly clusters: Record<string, TestCluster>;
  readonly cleanups: Array<() => Promise<void>>;
  /** Creates namespace `ns` in every cluster. */
  namespaceEverywhere(ns: string): Promise<void>;
} {
  const clusters: Record<string, TestCluster> = {};
  const cleanups: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    await Promise.all(
      names.map(async (name) => {
        const server = await startApiServer(serverOptions);
        const config: RestConfig = {
          host: server.url,
          tlsClientConfig: { caData: server.caPem },
          bearerToken: server.token,
          qps: -1,
          burst: 0,
          timeoutMs: 30_000,
          userAgent: `kubeloop-multicluster-${name}`,
        };
        clusters[name] = { name, server, config, api: newClient(config) };
      }),
    );
  });
  afterEach(async () => {
    for (const c of Object.values(clusters)) {
      c.server.faults.reset();
      c.server.faults.releaseBlackholes(true);
    }
    while (cleanups.length) await cleanups.pop()!();
  });
  afterAll(async () => {
    for (const c of Object.values(clusters)) {
      await c.api.close();
      await c.server.stop();
    }
  });
  return {
    clusters,
    cleanups,
    async namespaceEverywhere(ns) {
      await Promise.all(
        Object.values(clusters).map((c) => c.api.create(Namespace, { metadata: { name: ns } })),
      );
    },
  };
}
