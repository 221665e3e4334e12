/**
 * Envtest accepted objects that kube-apiserver 1.32 refuses with 422 Invalid in
 * its hand-written kind validation (pkg/apis/{core,apps,batch}/validation): a Deployment selector that does not
 * match the template labels, negative replicas, bad ConfigMap/Secret keys, a key in both data and binaryData,
 * Service port 70000, a ClusterIP Service without ports, a Job with restartPolicy Always, StatefulSet and
 * DaemonSet selector mismatches, changed selectors. Each case checks the status code, the message and the
 * causes' field paths as the server writes them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTestServer, type TestServer } from './helpers.js';

const NS = '/api/v1/namespaces/default';
const APPS = '/apis/apps/v1/namespaces/default';
const BATCH = '/apis/batch/v1/namespaces/default';

const tpl = (labels: Record<string, string> | undefined, spec: Record<string, unknown> = {}) => ({
  metadata: labels ? { labels } : {},
  spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec },
});

function causes(body: Json): [string, string][] {
  return (body.details?.causes ?? []).map((c: Json) => [c.field, c.message]);
}

describe('kind validation of the common built-in kinds', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  const deploy = (name: string, spec: Record<string, unknown>) =>
    t.req('POST', `${APPS}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name },
      spec: { selector: { matchLabels: { app: 'a' } }, template: tpl({ app: 'a' }), ...spec },
    });

  it('Deployment: selector must match the template labels', async () => {
    const r = await deploy('d1', { template: tpl({ app: 'b' }) });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({
      reason: 'Invalid',
      code: 422,
      details: { name: 'd1', group: 'apps', kind: 'Deployment' },
      message:
        'Deployment.apps "d1" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"b"}: `selector` does not match template `labels`',
    });
    expect(r.body.details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: map[string]string{"app":"b"}: `selector` does not match template `labels`',
        field: 'spec.template.metadata.labels',
      },
    ]);
    // matchExpressions are honoured
    const expr = await deploy('d1b', {
      selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['a', 'x'] }] },
    });
    expect(expr.status).toBe(201);
  });

  it('Deployment without a selector: Required, and nothing matches', async () => {
    const r = await deploy('d2', { selector: undefined });
    expect(r.body.message).toBe(
      'Deployment.apps "d2" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: map[string]string{"app":"a"}: `selector` does not match template `labels`]',
    );
  });

  it('Deployment: negative replicas, restartPolicy other than Always, progressDeadlineSeconds ≤ minReadySeconds', async () => {
    const r = await deploy('d3', {
      replicas: -1,
      minReadySeconds: 10,
      progressDeadlineSeconds: 10,
      template: tpl({ app: 'a' }, { restartPolicy: 'OnFailure' }),
    });
    expect(causes(r.body)).toEqual([
      ['spec.replicas', 'Invalid value: -1: must be greater than or equal to 0'],
      ['spec.template.spec.restartPolicy', 'Unsupported value: "OnFailure": supported values: "Always"'],
      ['spec.progressDeadlineSeconds', 'Invalid value: 10: must be greater than minReadySeconds'],
    ]);
  });

  it('Deployment: Recreate with rollingUpdate is forbidden; the selector is immutable in apps/v1', async () => {
    const r = await deploy('d4', { strategy: { type: 'Recreate', rollingUpdate: { maxSurge: 1 } } });
    expect(causes(r.body)).toEqual([
      ['spec.strategy.rollingUpdate', "Forbidden: may not be specified when strategy `type` is 'Recreate'"],
    ]);
    const ok = await deploy('d5', {});
    expect(ok.status).toBe(201);
    const changed = {
      ...ok.body,
      spec: { ...ok.body.spec, selector: { matchLabels: { app: 'a', tier: 'x' } } },
    };
    changed.spec.template.metadata.labels = { app: 'a', tier: 'x' };
    const put = await t.req('PUT', `${APPS}/deployments/d5`, changed);
    expect(put.status).toBe(422);
    expect(causes(put.body)).toEqual([
      [
        'spec.selector',
        'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"a", "tier":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
      ],
    ]);
  });

  it('Deployment: a bad selector operator is refused', async () => {
    const r = await deploy('d6', { selector: { matchExpressions: [{ key: 'app', operator: 'Is' }] } });
    expect(causes(r.body)[0]).toEqual([
      'spec.selector.matchExpressions[0].operator',
      'Invalid value: "Is": not a valid selector operator',
    ]);
  });

  it('ConfigMap: keys must be valid config keys, and not in both data and binaryData', async () => {
    const cm = (name: string, extra: Record<string, unknown>) =>
      t.req('POST', `${NS}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name },
        ...extra,
      });
    const bad = await cm('c1', { data: { 'bad key': 'x' } });
    expect(bad.status).toBe(422);
    expect(bad.body.message).toBe(
      `ConfigMap "c1" is invalid: data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
    );
    expect(bad.body.details).toMatchObject({ name: 'c1', kind: 'ConfigMap' });
    const dup = await cm('c2', { data: { a: 'x' }, binaryData: { a: 'eA==' } });
    expect(causes(dup.body)).toEqual([
      ['data[a]', 'Invalid value: "a": duplicate of key present in binaryData'],
      ['binaryData[a]', 'Invalid value: "a": duplicate of key present in data'],
    ]);
    const dots = await cm('c3', { data: { '..a': 'x' } });
    expect(causes(dots.body)).toEqual([['data[..a]', `Invalid value: "..a": must not start with '..'`]]);
    expect((await cm('c4', { data: { 'ok.key_A-1': 'x' } })).status).toBe(201);
  });

  it('ConfigMap and Secret: once immutable, data and the flag cannot change', async () => {
    const created = await t.req('POST', `${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'imm' },
      data: { a: 'x' },
      immutable: true,
    });
    expect(created.status).toBe(201);
    const r = await t.req('PUT', `${NS}/configmaps/imm`, {
      ...created.body,
      data: { a: 'y' },
      immutable: false,
    });
    expect(causes(r.body)).toEqual([
      ['immutable', 'Forbidden: field is immutable when `immutable` is set'],
      ['data', 'Forbidden: field is immutable when `immutable` is set'],
    ]);
  });

  it('Secret: data keys, type immutable, and the keys a TLS secret needs', async () => {
    const secret = (name: string, extra: Record<string, unknown>) =>
      t.req('POST', `${NS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name }, ...extra });
    const bad = await secret('s1', { data: { 'a/b': 'eA==' } });
    expect(bad.status).toBe(422);
    expect(causes(bad.body)[0]![0]).toBe('data[a/b]');
    const tls = await secret('s2', { type: 'kubernetes.io/tls', data: { 'tls.crt': 'eA==' } });
    expect(tls.body.message).toBe('Secret "s2" is invalid: data[tls.key]: Required value');
    const ok = await secret('s3', { stringData: { a: 'x' } });
    expect(ok.status).toBe(201);
    const retyped = await t.req('PUT', `${NS}/secrets/s3`, { ...ok.body, type: 'kubernetes.io/basic-auth' });
    // the new type's own rules apply too (upstream validates the updated Secret whole)
    expect(causes(retyped.body)).toEqual([
      ['type', 'Invalid value: "kubernetes.io/basic-auth": field is immutable'],
      ['data[username]', 'Required value'],
      ['data[password]', 'Required value'],
    ]);
  });

  it('Service: port range, ClusterIP without ports, names required with several ports', async () => {
    const svc = (name: string, spec: Record<string, unknown>) =>
      t.req('POST', `${NS}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec });
    const big = await svc('v1', { ports: [{ port: 70000 }] });
    expect(big.status).toBe(422);
    expect(big.body.message).toBe(
      'Service "v1" is invalid: [spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive]',
    );
    const none = await svc('v2', {});
    expect(none.body.message).toBe('Service "v2" is invalid: spec.ports: Required value');
    expect((await svc('v3', { clusterIP: 'None' })).status).toBe(201);
    const two = await svc('v4', { ports: [{ port: 80 }, { port: 81, name: 'b' }] });
    expect(causes(two.body)).toEqual([['spec.ports[0].name', 'Required value']]);
    const np = await svc('v5', { ports: [{ port: 80, nodePort: 30000 }] });
    expect(causes(np.body)).toEqual([
      ['spec.ports[0].nodePort', "Forbidden: may not be used when `type` is 'ClusterIP'"],
    ]);
    const tp = await svc('v6', { ports: [{ port: 80, targetPort: 'HTTP' }] });
    expect(causes(tp.body)).toEqual([
      [
        'spec.ports[0].targetPort',
        'Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
      ],
      ['spec.ports[0].targetPort', 'Invalid value: "HTTP": must contain at least one letter (a-z)'],
    ]);
    expect((await svc('v7', { type: 'ExternalName', externalName: 'example.com' })).status).toBe(201);
    // spec.selector is a label map (core ValidateService: ValidateLabels): key and value checked, path is the map's
    const sel = await svc('v8', { ports: [{ port: 80 }], selector: { '-app': 'a b' } });
    expect(sel.status).toBe(422);
    expect(causes(sel.body).map(([field, message]) => [field, message.split(':')[0]])).toEqual([
      ['spec.selector', 'Invalid value'],
      ['spec.selector', 'Invalid value'],
    ]);
    expect(sel.body.message).toContain('spec.selector: Invalid value: "-app": name part must consist of');
    expect(sel.body.message).toContain('spec.selector: Invalid value: "a b": a valid label must be');
  });

  it('Job and CronJob: the pod template restartPolicy must be OnFailure or Never', async () => {
    const job = (name: string, restartPolicy?: string) =>
      t.req('POST', `${BATCH}/jobs`, {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name },
        spec: { template: tpl(undefined, restartPolicy ? { restartPolicy } : {}) },
      });
    const always = await job('j1', 'Always');
    expect(always.status).toBe(422);
    expect(always.body.message).toBe(
      'Job.batch "j1" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"',
    );
    // the pod defaults give Always when it is left out
    expect((await job('j2')).status).toBe(422);
    expect((await job('j3', 'Never')).status).toBe(201);
    const cron = await t.req('POST', `${BATCH}/cronjobs`, {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'cj1' },
      spec: { schedule: '* * * * *', jobTemplate: { spec: { template: tpl(undefined) } } },
    });
    expect(causes(cron.body)).toEqual([
      [
        'spec.jobTemplate.spec.template.spec.restartPolicy',
        'Unsupported value: "Always": supported values: "OnFailure", "Never"',
      ],
    ]);
  });

  it('StatefulSet, DaemonSet and ReplicaSet: the selector must match the template labels', async () => {
    for (const [resource, kind, extra] of [
      ['statefulsets', 'StatefulSet', { serviceName: 'x' }],
      ['daemonsets', 'DaemonSet', {}],
      ['replicasets', 'ReplicaSet', {}],
    ] as const) {
      const create = (name: string, app: string) =>
        t.req('POST', `${APPS}/${resource}`, {
          apiVersion: 'apps/v1',
          kind,
          metadata: { name },
          spec: { selector: { matchLabels: { app: 'a' } }, template: tpl({ app }), ...extra },
        });
      const r = await create('w1', 'b');
      expect(r.status, kind).toBe(422);
      expect(causes(r.body), kind).toEqual([
        [
          'spec.template.metadata.labels',
          'Invalid value: map[string]string{"app":"b"}: `selector` does not match template `labels`',
        ],
      ]);
      const ok = await create('w2', 'a');
      expect(ok.status, kind).toBe(201);
    }
    const sts = (await t.req('GET', `${APPS}/statefulsets/w2`)).body;
    const renamed = await t.req('PUT', `${APPS}/statefulsets/w2`, {
      ...sts,
      spec: { ...sts.spec, serviceName: 'y' },
    });
    expect(causes(renamed.body)).toEqual([
      [
        'spec',
        "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ],
    ]);
  });
});
