import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_RESOURCES } from '../../src/builtin/index.js';
import { type Json, startTestServer, type TestServer } from './helpers.js';

const NS = 'default';
const job = (name: string, container: Record<string, unknown>) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name },
  spec: {
    template: {
      spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', ...container }] },
    },
  },
});

describe('every built-in kind of 1.32, with generic storage', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves the groups and resources of the recorded discovery (19 groups, 59 resources)', async () => {
    const groups = (await t.req('GET', '/apis')).body.groups.map((g: Json) => g.name);
    expect(groups).toHaveLength(19);
    expect(groups).toContain('rbac.authorization.k8s.io');
    expect(BUILTIN_RESOURCES).toHaveLength(59);
    const batch = (await t.req('GET', '/apis/batch/v1')).body.resources.map((r: Json) => r.name);
    expect(batch).toEqual(['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']);
  });

  it('stores Jobs with template defaults and generation, and refuses a typo in the pod template under Strict', async () => {
    const c = await t.req('POST', `/apis/batch/v1/namespaces/${NS}/jobs`, job('j1', {}));
    expect(c.status).toBe(201);
    expect(c.body.metadata.generation).toBe(1);
    const ctr = c.body.spec.template.spec.containers[0];
    expect(ctr.imagePullPolicy).toBe('Always');
    expect(ctr.terminationMessagePath).toBe('/dev/termination-log');
    expect(c.body.spec.template.spec.dnsPolicy).toBe('ClusterFirst');
    expect(c.body.spec.backoffLimit).toBe(6);
    const typo = await t.req(
      'POST',
      `/apis/batch/v1/namespaces/${NS}/jobs?fieldValidation=Strict`,
      job('j2', { imagePullPolice: 'Always' }),
    );
    expect(typo.status).toBe(400);
    expect(typo.body.message).toContain('unknown field "spec.template.spec.containers[0].imagePullPolice"');
    const list = await t.req('GET', `/apis/batch/v1/namespaces/${NS}/jobs`);
    expect(list.body.kind).toBe('JobList');
    expect(list.body.items.map((i: Json) => i.metadata.name)).toEqual(['j1']);
    expect(list.body.items[0].kind).toBeUndefined();
  });

  it('serves RBAC, ServiceAccounts and PVCs; StatefulSets scale; review kinds answer without storing', async () => {
    for (const [path, body] of [
      [
        `/api/v1/namespaces/${NS}/serviceaccounts`,
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa' } },
      ],
      [
        `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`,
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'r' }, rules: [] },
      ],
      [
        `/api/v1/namespaces/${NS}/persistentvolumeclaims`,
        { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'pvc' }, spec: {} },
      ],
    ] as const)
      expect((await t.req('POST', path, body)).status, path).toBe(201);
    const sts = await t.req('POST', `/apis/apps/v1/namespaces/${NS}/statefulsets`, {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db' },
      spec: {
        selector: { matchLabels: { app: 'db' } },
        template: {
          metadata: { labels: { app: 'db' } },
          spec: { containers: [{ name: 'c', image: 'pg:16' }] },
        },
      },
    });
    expect(sts.status).toBe(201);
    expect(sts.body.spec.replicas).toBe(1);
    const scaled = await t.req(
      'PATCH',
      `/apis/apps/v1/namespaces/${NS}/statefulsets/db/scale`,
      { spec: { replicas: 3 } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(scaled.status).toBe(200);
    expect(scaled.body.spec.replicas).toBe(3);
    expect(
      (await t.req('GET', `/apis/apps/v1/namespaces/${NS}/statefulsets/db`)).body.metadata.generation,
    ).toBe(2);
    const review = await t.req('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: 'x' },
    });
    expect(review.status).toBe(201);
    expect(review.body.kind).toBe('TokenReview');
    // An unknown token: not authenticated (the field omitted, as kube-apiserver's omitempty does), with an error.
    expect(review.body.status).toEqual({ user: {}, error: '[invalid bearer token, token lookup failed]' });
    expect(review.body.metadata.name).toBeUndefined();
  });
});
