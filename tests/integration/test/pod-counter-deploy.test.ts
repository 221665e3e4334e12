// apps/pod-counter/deploy: `kubectl apply --dry-run=server -k` accepts it, and its RBAC rules cover exactly the
// requests pod-counter makes — collected from the API server's request log while pod-counter runs with
// leader election and the ConfigMap report. Needs envtest's request log (skipped with USE_EXISTING_CLUSTER).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Namespace, newClient, Pod } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { runPodCounter } from '@kubeloop/pod-counter';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { captureLogger, type LogRecord, podManifest, waitFor } from './support.js';

const run = promisify(execFile);
const deployDir = fileURLToPath(new URL('../../../apps/pod-counter/deploy/', import.meta.url));
const realCluster = process.env.USE_EXISTING_CLUSTER === 'true';
const APP_TOKEN = 'pod-counter-app-token';
const APP_USER = 'system:serviceaccount:pod-counter:pod-counter';
const NS = 'pod-counter';

async function hasKubectl(): Promise<boolean> {
  try {
    await run('kubectl', ['version', '--client']);
    return true;
  } catch {
    return false;
  }
}

interface Rule {
  readonly apiGroups: string[];
  readonly resources: string[];
  readonly verbs: string[];
  readonly resourceNames?: string[];
}

/** `group/resource verb` for every permission the manifests grant (cluster-wide or in `pod-counter`). */
function grantedPermissions(): Set<string> {
  const out = new Set<string>();
  const docs = parseAllDocuments(readFileSync(`${deployDir}rbac.yaml`, 'utf8')).map(
    (d) => d.toJS() as { kind: string; rules?: Rule[] },
  );
  for (const doc of docs) {
    if (doc.kind !== 'ClusterRole' && doc.kind !== 'Role') continue;
    for (const rule of doc.rules ?? []) {
      for (const g of rule.apiGroups)
        for (const r of rule.resources) for (const v of rule.verbs) out.add(`${g}/${r} ${v}`);
    }
  }
  return out;
}

describe.skipIf(realCluster)('pod-counter deploy manifests', () => {
  let server: ApiServer;
  let admin: ReturnType<typeof newClient>;
  beforeAll(async () => {
    server = await startApiServer({ tokens: [{ token: APP_TOKEN, user: APP_USER }] });
    const config: RestConfig = {
      host: server.url,
      tlsClientConfig: { caData: server.caPem },
      bearerToken: server.token,
      qps: -1,
      burst: 0,
      timeoutMs: 0,
      userAgent: 'pod-counter-deploy-test',
    };
    admin = newClient(config);
    await admin.create(Namespace, { metadata: { name: NS } });
  });
  afterAll(async () => {
    await admin?.close();
    await server?.stop();
  });

  it('kubectl apply --dry-run=server -k deploy/ is accepted', async (ctx) => {
    if (!(await hasKubectl())) ctx.skip();
    const { stdout } = await run('kubectl', ['apply', '--dry-run=server', '-k', deployDir], {
      env: { ...process.env, KUBECONFIG: server.kubeconfigPath },
    });
    for (const what of [
      'namespace/pod-counter',
      'serviceaccount/pod-counter',
      'clusterrole.rbac.authorization.k8s.io/pod-counter',
      'role.rbac.authorization.k8s.io/pod-counter-leader-election',
      'role.rbac.authorization.k8s.io/pod-counter-report',
      'deployment.apps/pod-counter',
      'service/pod-counter-metrics',
    ]) {
      expect(stdout).toMatch(
        new RegExp(`${what.replaceAll('.', '\\.')} (created|configured|unchanged) \\(server dry run\\)`),
      );
    }
  });

  it('the RBAC rules cover exactly the requests pod-counter makes', async () => {
    await admin.create(Pod, podManifest(NS, 'p1'));
    await admin.create(Pod, podManifest('default', 'p2'));
    const records: LogRecord[] = [];
    const ac = new AbortController();
    const done = runPodCounter(
      {
        host: server.url,
        tlsClientConfig: { caData: server.caPem },
        bearerToken: APP_TOKEN,
        qps: -1,
        burst: 0,
        timeoutMs: 0,
        userAgent: 'pod-counter/v0.1.0',
      },
      {
        signal: ac.signal,
        logger: captureLogger(records),
        // pod-counter's own elector makes the Lease requests checked here, so it runs on the real clock; nothing
        // waits for an expiry, so the lease and renew deadline are long (60 s / 45 s): a process starved of CPU
        // for tens of seconds still renews in time (with 1.5 s it stopped with LeaderElectionLostError under a
        // higher-priority soak). Renews still come every 500 ms.
        leaderElection: {
          namespace: NS,
          leaseDurationMs: 60_000,
          renewDeadlineMs: 45_000,
          retryPeriodMs: 500,
        },
        report: { namespace: NS, name: 'pod-counts' },
      },
    );
    try {
      await waitFor(() => records.some((r) => r.msg === 'report written'), 'the first report');
      await admin.create(Pod, podManifest(NS, 'p3'));
      await waitFor(() => records.filter((r) => r.msg === 'report written').length >= 2, 'a second report');
      // Several lease renewals.
      const renewsBefore = server.requestLog.filter(
        (r) => r.resource === 'leases' && r.verb === 'update',
      ).length;
      await waitFor(
        () =>
          server.requestLog.filter((r) => r.resource === 'leases' && r.verb === 'update').length >
          renewsBefore + 1,
        'lease renewals',
      );
    } finally {
      ac.abort();
      await done;
    }
    const mine = server.requestLog.filter((r) => r.user === APP_USER);
    const used = new Set(
      mine
        .filter((r) => r.verb !== 'nonresource' && r.resource)
        .map((r) => `${r.group ?? ''}/${r.resource} ${r.verb}`),
    );
    const granted = grantedPermissions();
    // Every request is allowed by a rule…
    expect([...used].filter((p) => !granted.has(p))).toEqual([]);
    // …and every rule is used, except `create` on the report ConfigMap: server-side apply creates it with a
    // PATCH, which kube-apiserver authorizes as create when the object does not exist yet; and `list` on pods:
    // the informer syncs by a streaming list (WatchList, a watch) on a server that serves it, as this one does,
    // and needs `list` on a server that refuses it (kube-apiserver 1.32 on etcd 3.4).
    expect([...granted].filter((p) => !used.has(p)).sort()).toEqual(['/configmaps create', '/pods list']);
    // Namespaced requests stay in the namespaces the Roles bind (pods are cluster-wide by the ClusterRole).
    for (const r of mine) {
      if (r.resource === 'leases' || r.resource === 'configmaps') expect(r.namespace).toBe(NS);
    }
  });
});
