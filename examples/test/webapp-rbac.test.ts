// `kubeloop rbac generate` for the WebApp example covers exactly the requests its manager makes: the controller runs
// as a ServiceAccount user on envtest (leader election, events, the status subresource, owned ConfigMaps), and every
// request in envtest's request log is allowed by a generated rule and every generated rule is used. Needs envtest's
// request log (skipped with USE_EXISTING_CLUSTER), like the pod-counter RBAC test in tests/integration.
import { fileURLToPath } from 'node:url';
import { newManager } from '@kubeloop/builder';
import {
  type ApiClient,
  ConfigMap,
  type KubeObject,
  kind,
  Namespace,
  newClient,
  retryOnConflict,
} from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { customResourceDefinition, runCli } from '@kubeloop/crd';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { addWebAppController, WebApp } from '../src/webapp.js';

const realCluster = process.env.USE_EXISTING_CLUSTER === 'true';
const module = fileURLToPath(new URL('../src/webapp.ts', import.meta.url));
const TOKEN = 'webapp-manager-token';
const USER = 'system:serviceaccount:webapp-system:manager';
const NS = 'webapp-system';
const CRD = kind('apiextensions.k8s.io/v1', 'CustomResourceDefinition');

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

describe.skipIf(realCluster)('example: generated RBAC for the WebApp controller', () => {
  let server: ApiServer;
  let admin: ApiClient;
  beforeAll(async () => {
    server = await startApiServer({ tokens: [{ token: TOKEN, user: USER }] });
    const config: RestConfig = {
      host: server.url,
      tlsClientConfig: { caData: server.caPem },
      bearerToken: server.token,
      qps: -1,
      burst: 0,
      timeoutMs: 0,
      userAgent: 'webapp-rbac-test',
    };
    admin = newClient(config);
    await admin.create(CRD, customResourceDefinition(WebApp) as KubeObject);
    await vi.waitFor(() => admin.list(WebApp, { limit: 1 }), { timeout: 20_000, interval: 100 });
    await admin.create(Namespace, { metadata: { name: NS } });
  });
  afterAll(async () => {
    await admin?.close();
    await server?.stop();
  });

  it('every request of the manager is allowed by a generated rule, and every rule is used', async () => {
    const out: string[] = [];
    const code = await runCli(
      ['rbac', 'generate', module, '--stdout', '--service-account', `${NS}/manager`],
      { cwd: process.cwd(), stdout: (t) => out.push(t), stderr: () => {} },
    );
    expect(code).toBe(0);
    const docs = parseAllDocuments(out.join('')).map(
      (d) =>
        (Array.isArray(d) ? {} : d.toJS()) as {
          kind: string;
          metadata: { namespace?: string };
          rules?: Rule[];
        },
    );
    const granted = new Set<string>();
    const namespaced = new Set<string>();
    for (const doc of docs) {
      for (const rule of doc.rules ?? [])
        for (const g of rule.apiGroups)
          for (const r of rule.resources)
            for (const v of rule.verbs) {
              granted.add(`${g}/${r} ${v}`);
              if (doc.kind === 'Role') namespaced.add(`${g}/${r}`);
            }
    }

    const mgr = newManager(
      {
        host: server.url,
        tlsClientConfig: { caData: server.caPem },
        bearerToken: TOKEN,
        qps: -1,
        burst: 0,
        timeoutMs: 0,
        userAgent: 'webapp-manager',
      },
      {
        metrics: { bindAddress: '0' },
        health: { bindAddress: '0' },
        // The manager's own elector makes the Lease requests this test checks, so it stays on the real clock,
        // with a lease and renew deadline (60 s / 45 s) that a process starved of CPU for tens of seconds still
        // renews within: the defaults' 10 s renew deadline let a starved test stop with LeaderElectionLostError.
        leaderElection: {
          id: 'webapp-manager',
          namespace: NS,
          releaseOnCancel: true,
          leaseDurationMs: 60_000,
          renewDeadlineMs: 45_000,
        },
      },
    );
    addWebAppController(mgr);
    const stop = new AbortController();
    const done = mgr.start(stop.signal);
    try {
      await admin.create(WebApp, {
        metadata: { namespace: 'default', name: 'a' },
        spec: { image: 'registry.example.com/a:1' },
      });
      const cm = { namespace: 'default', name: 'a-web' };
      await vi.waitFor(async () => expect((await admin.get(ConfigMap, cm)).data?.replicas).toBe('1'), {
        timeout: 30_000,
        interval: 100,
      });
      // a spec change: the ConfigMap is updated (and the same Event again: a series)
      for (const replicas of [2, 3]) {
        // the controller writes status meanwhile: an update can conflict, read again and retry
        await retryOnConflict(async () => {
          const app = await admin.get(WebApp, { namespace: 'default', name: 'a' });
          await admin.update(WebApp, { ...app, spec: { ...app.spec, replicas } });
        });
        await vi.waitFor(
          async () => expect((await admin.get(ConfigMap, cm)).data?.replicas).toBe(String(replicas)),
          {
            timeout: 30_000,
            interval: 100,
          },
        );
      }
    } finally {
      stop.abort();
      await done;
    }
    const mine = server.requestLog.filter((r) => r.user === USER && r.verb !== 'nonresource' && r.resource);
    const used = new Set(
      mine.map((r) => `${r.group ?? ''}/${r.resource}${r.subresource ? `/${r.subresource}` : ''} ${r.verb}`),
    );
    expect([...used].filter((p) => !granted.has(p)).sort()).toEqual([]);
    // …and every rule is used, except perhaps `patch` on events: the recorder PATCHes only the count of a series of
    // repeated Events, on its refresh period or at shutdown, which a short run may not reach; and `list` on a
    // resource the informers watched: they sync by a streaming list (WatchList, a watch) on a server that serves
    // it, as this one does, and need `list` on one that refuses it (kube-apiserver 1.32 on etcd 3.4).
    const unused = [...granted].filter((p) => !used.has(p) && p !== 'events.k8s.io/events patch');
    const watchListed = (p: string) =>
      p.endsWith(' list') && used.has(`${p.slice(0, -' list'.length)} watch`);
    expect(unused.filter((p) => !watchListed(p)).sort()).toEqual([]);
    // the exemption above is no blanket: only resources that were watched, and each was
    expect(unused.filter(watchListed).sort()).toEqual([
      '/configmaps list',
      'examples.kubeloop.dev/webapps list',
    ]);
    // the leader-election Role is namespaced: its requests stay in the manager's namespace
    for (const r of mine) if (namespaced.has(`${r.group ?? ''}/${r.resource}`)) expect(r.namespace).toBe(NS);
  });
});
