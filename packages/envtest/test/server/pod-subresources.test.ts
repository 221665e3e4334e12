import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, pod, startTestServer, type TestServer } from './helpers.js';

const NS = '/api/v1/namespaces/default';
const eviction = (name: string, deleteOptions?: Json) => ({
  apiVersion: 'policy/v1',
  kind: 'Eviction',
  metadata: { name, namespace: 'default' },
  ...(deleteOptions ? { deleteOptions } : {}),
});

/**
 * Pod subresources that discovery lists without storage of their own, answered as kube-apiserver 1.32 does
 * with no kubelet: exec/attach/portforward need a scheduled pod and a connection upgrade (400), eviction
 * deletes the pod (201 Success Status) unless a PodDisruptionBudget selects it (429).
 */
describe('pod exec/attach/portforward/eviction', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('exec, attach and portforward answer 400 as the server does without a kubelet', async () => {
    expect((await t.req('POST', `${NS}/pods`, pod('c1', { app: 'c1' }))).status).toBe(201);
    const two = pod('c2');
    two.spec.containers = [
      { name: 'a', image: 'i' },
      { name: 'b', image: 'i' },
    ];
    expect((await t.req('POST', `${NS}/pods`, two)).status).toBe(201);
    const msg = async (method: string, path: string) => {
      const r = await t.req(method, path);
      return [r.status, r.body.reason, r.body.message];
    };
    expect(await msg('POST', `${NS}/pods/c1/exec?command=ls&stdout=true`)).toEqual([
      400,
      'BadRequest',
      'pod c1 does not have a host assigned',
    ]);
    expect(await msg('GET', `${NS}/pods/c2/attach?stdout=true`)).toEqual([
      400,
      'BadRequest',
      'a container name must be specified for pod c2, choose one of: [a b]',
    ]);
    expect(await msg('POST', `${NS}/pods/c2/exec?container=z&command=ls`)).toEqual([
      400,
      'BadRequest',
      'container z is not valid for pod c2',
    ]);
    expect(await msg('POST', `${NS}/pods/c1/portforward?ports=80`)).toEqual([
      400,
      'BadRequest',
      'pod c1 does not have a host assigned',
    ]);
    const bound = pod('c3', {}, { spec: { nodeName: 'node-1' } });
    expect((await t.req('POST', `${NS}/pods`, bound)).status).toBe(201);
    expect(await msg('POST', `${NS}/pods/c3/exec?command=ls&stdout=true`)).toEqual([
      400,
      'BadRequest',
      'Upgrade request required',
    ]);
    expect((await t.req('GET', `${NS}/pods/missing/exec?command=ls`)).status).toBe(404);
    expect((await t.req('PUT', `${NS}/pods/c1/exec`, {})).status).toBe(405);
  });

  it('log checks the container as LogLocation does, then answers an empty body (no kubelet)', async () => {
    const init = pod('lg');
    init.spec.initContainers = [{ name: 'setup', image: 'i' }];
    init.spec.containers = [
      { name: 'a', image: 'i' },
      { name: 'b', image: 'i' },
    ];
    expect((await t.req('POST', `${NS}/pods`, init)).status).toBe(201);
    const none = await t.req('GET', `${NS}/pods/lg/log`);
    expect([none.status, none.body.message]).toEqual([
      400,
      'a container name must be specified for pod lg, choose one of: [setup a b]',
    ]);
    const wrong = await t.req('GET', `${NS}/pods/lg/log?container=z`);
    expect([wrong.status, wrong.body.message]).toEqual([400, 'container z is not valid for pod lg']);
    const ok = await t.req('GET', `${NS}/pods/lg/log?container=setup`);
    expect([ok.status, ok.text]).toEqual([200, '']);
  });

  it('eviction deletes a pod no PodDisruptionBudget selects: 201 Success Status', async () => {
    expect((await t.req('POST', `${NS}/pods`, pod('ev1', { app: 'free' }))).status).toBe(201);
    const mismatch = await t.req('POST', `${NS}/pods/ev1/eviction`, eviction('other'));
    expect([mismatch.status, mismatch.body.message]).toEqual([
      400,
      'name in URL does not match name in Eviction object',
    ]);
    const r = await t.req('POST', `${NS}/pods/ev1/eviction`, eviction('ev1', { gracePeriodSeconds: 0 }));
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    expect((await t.req('GET', `${NS}/pods/ev1`)).status).toBe(404);
    expect((await t.req('GET', `${NS}/pods/ev1/eviction`)).status).toBe(405);
  });

  const PDBS = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';
  const merge = { 'content-type': 'application/merge-patch+json' };
  /** A pod a kubelet would have started: phase Running, Ready as given (envtest runs no kubelet). */
  async function runningPod(name: string, labels: Record<string, string>, ready = true): Promise<void> {
    expect((await t.req('POST', `${NS}/pods`, pod(name, labels))).status).toBe(201);
    const status = {
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: '2026-01-01T00:00:00Z' },
      ],
    };
    expect((await t.req('PATCH', `${NS}/pods/${name}/status`, { status }, merge)).status).toBe(200);
  }
  /** A PDB; with `status`, written as the disruption controller would (observedGeneration = generation 1). */
  async function budget(name: string, app: string, status?: Json, spec: Json = {}): Promise<void> {
    const body = {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name },
      spec: { minAvailable: 1, selector: { matchLabels: { app } }, ...spec },
    };
    expect((await t.req('POST', PDBS, body)).status).toBe(201);
    if (status)
      expect(
        (
          await t.req(
            'PATCH',
            `${PDBS}/${name}/status`,
            { status: { observedGeneration: 1, ...status } },
            merge,
          )
        ).status,
      ).toBe(200);
  }

  it('a Pending pod is evicted whatever its budget says (canIgnorePDB), after a DisruptionTarget condition', async () => {
    expect((await t.req('POST', `${NS}/pods`, pod('pend', { app: 'pend' }))).status).toBe(201);
    await budget('pend-guard', 'pend');
    const rv = (await t.req('GET', `${NS}/pods`)).body.metadata.resourceVersion;
    const w = await t.watch(`${NS}/pods?watch=true&resourceVersion=${rv}&fieldSelector=metadata.name%3Dpend`);
    const r = await t.req('POST', `${NS}/pods/pend/eviction`, eviction('pend'));
    expect(r.status).toBe(201);
    await w.until((ev) => ev.some((e) => e.type === 'DELETED'));
    w.close();
    const modified = w.events.find((e) => e.type === 'MODIFIED');
    expect(modified?.object.status.conditions).toContainEqual(
      expect.objectContaining({
        type: 'DisruptionTarget',
        status: 'True',
        reason: 'EvictionByEvictionAPI',
        message: 'Eviction API: evicting',
      }),
    );
    expect((await t.req('GET', `${NS}/pods/pend`)).status).toBe(404);
  });

  it('a budget the disruption controller has not processed refuses a running pod: 429, Retry-After 10', async () => {
    await runningPod('ev2', { app: 'guarded' });
    await budget('guard', 'guarded');
    const r = await t.req('POST', `${NS}/pods/ev2/eviction`, eviction('ev2'));
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBe('10');
    expect(r.body.message).toBe("Cannot evict pod as it would violate the pod's disruption budget.");
    expect(r.body.details).toEqual({
      causes: [
        {
          reason: 'DisruptionBudget',
          message: 'The disruption budget guard is still being processed by the server.',
        },
      ],
      retryAfterSeconds: 10,
    });
    expect((await t.req('GET', `${NS}/pods/ev2`)).status).toBe(200);
  });

  it('an eviction takes one disruption from the budget; at 0 the next one is 429 without Retry-After', async () => {
    await runningPod('dec1', { app: 'dec' });
    await runningPod('dec2', { app: 'dec' });
    await budget('dec-guard', 'dec', {
      disruptionsAllowed: 1,
      currentHealthy: 2,
      desiredHealthy: 1,
      expectedPods: 2,
    });
    const dry = await t.req('POST', `${NS}/pods/dec1/eviction?dryRun=All`, eviction('dec1'));
    expect(dry.status).toBe(201);
    expect((await t.req('GET', `${PDBS}/dec-guard`)).body.status.disruptionsAllowed).toBe(1);
    expect((await t.req('GET', `${NS}/pods/dec1`)).status).toBe(200);

    const r = await t.req('POST', `${NS}/pods/dec1/eviction`, eviction('dec1'));
    expect(r.status).toBe(201);
    expect((await t.req('GET', `${NS}/pods/dec1`)).status).toBe(404);
    const st = (await t.req('GET', `${PDBS}/dec-guard`)).body.status;
    expect(st.disruptionsAllowed).toBe(0);
    expect(Object.keys(st.disruptedPods)).toEqual(['dec1']);
    expect(st.conditions).toEqual([
      expect.objectContaining({
        type: 'DisruptionAllowed',
        status: 'False',
        reason: 'InsufficientPods',
        observedGeneration: 1,
      }),
    ]);

    const refused = await t.req('POST', `${NS}/pods/dec2/eviction`, eviction('dec2'));
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeUndefined();
    expect(refused.body.details).toEqual({
      causes: [
        {
          reason: 'DisruptionBudget',
          message: 'The disruption budget dec-guard needs 1 healthy pods and has 2 currently',
        },
      ],
    });
    expect((await t.req('GET', `${NS}/pods/dec2`)).status).toBe(200);
  });

  it('an unready pod is evicted without taking a disruption when the budget is healthy or AlwaysAllow', async () => {
    await runningPod('unready1', { app: 'healthy' }, false);
    await budget('healthy-guard', 'healthy', { disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2 });
    expect((await t.req('POST', `${NS}/pods/unready1/eviction`, eviction('unready1'))).status).toBe(201);
    expect((await t.req('GET', `${PDBS}/healthy-guard`)).body.status.disruptionsAllowed).toBe(0);
    await runningPod('unready2', { app: 'always' }, false);
    await budget('always-guard', 'always', undefined, { unhealthyPodEvictionPolicy: 'AlwaysAllow' });
    expect((await t.req('POST', `${NS}/pods/unready2/eviction`, eviction('unready2'))).status).toBe(201);
    expect((await t.req('GET', `${NS}/pods/unready2`)).status).toBe(404);
    // a ready pod under the same unprocessed AlwaysAllow budget is still refused
    await runningPod('ready3', { app: 'always' });
    expect((await t.req('POST', `${NS}/pods/ready3/eviction`, eviction('ready3'))).status).toBe(429);
  });

  it('two budgets selecting a running pod: a 500 Status without a reason; a negative budget: 403', async () => {
    await runningPod('two', { app: 'two' });
    await budget('two-a', 'two');
    await budget('two-b', 'two');
    const r = await t.req('POST', `${NS}/pods/two/eviction`, eviction('two'));
    expect([r.status, r.body]).toEqual([
      500,
      {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message:
          'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
        code: 500,
      },
    ]);
    await runningPod('neg', { app: 'neg' });
    await budget('neg-guard', 'neg', { disruptionsAllowed: -1 });
    const f = await t.req('POST', `${NS}/pods/neg/eviction`, eviction('neg'));
    expect([f.status, f.body.reason, f.body.message]).toEqual([
      403,
      'Forbidden',
      'poddisruptionbudget.policy "neg-guard" is forbidden: pdb disruptions allowed is negative',
    ]);
  });

  it('binding assigns the pod to a node (spec.nodeName, PodScheduled) once; a second binding is 409', async () => {
    expect((await t.req('POST', `${NS}/pods`, pod('bound', { app: 'bound' }))).status).toBe(201);
    const before = (await t.req('GET', `${NS}/pods/bound`)).body;
    const binding = (podName: string, node: string, extra: Json = {}) => ({
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: podName, ...extra },
      target: { kind: 'Node', name: node },
    });
    const mismatch = await t.req('POST', `${NS}/pods/bound/binding`, binding('other', 'n1'));
    expect([mismatch.status, mismatch.body.message]).toEqual([
      400,
      'name in URL does not match name in Binding object',
    ]);
    expect((await t.req('POST', `${NS}/pods/bound/binding?dryRun=All`, binding('bound', 'n1'))).status).toBe(
      201,
    );
    expect((await t.req('GET', `${NS}/pods/bound`)).body.spec.nodeName).toBeUndefined();
    const r = await t.req(
      'POST',
      `${NS}/pods/bound/binding`,
      binding('bound', 'n1', { annotations: { a: 'b' } }),
    );
    expect([r.status, r.body]).toEqual([
      201,
      { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 },
    ]);
    const after = (await t.req('GET', `${NS}/pods/bound`)).body;
    expect(after.spec.nodeName).toBe('n1');
    expect(after.metadata.annotations).toEqual({ a: 'b' });
    expect(after.status.conditions).toEqual([
      { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: expect.any(String) },
    ]);
    expect(after.metadata.managedFields).toEqual(before.metadata.managedFields);
    const again = await t.req('POST', `${NS}/pods/bound/binding`, binding('bound', 'n2'));
    expect([again.status, again.body.reason, again.body.message]).toEqual([
      409,
      'Conflict',
      'Operation cannot be fulfilled on pods/binding "bound": pod bound is already assigned to node "n1"',
    ]);
    // scheduled now: exec gets past "does not have a host assigned" to the upgrade the server would need
    expect((await t.req('POST', `${NS}/pods/bound/exec?command=ls`)).body.message).toBe(
      'Upgrade request required',
    );
    expect((await t.req('POST', `${NS}/pods/missing/binding`, binding('missing', 'n1'))).status).toBe(404);
  });

  it('serviceaccounts/token mints a token that authenticates as the ServiceAccount until it expires', async () => {
    const SAS = '/api/v1/namespaces/default/serviceaccounts';
    expect((await t.req('POST', SAS, { metadata: { name: 'robot' } })).status).toBe(201);
    const tr = (spec: Json) => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec });
    expect((await t.req('POST', `${SAS}/ghost/token`, tr({}))).status).toBe(404);
    const short = await t.req('POST', `${SAS}/robot/token`, tr({ expirationSeconds: 60 }));
    expect([short.status, short.body.message]).toEqual([
      422,
      'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
    ]);
    const r = await t.req('POST', `${SAS}/robot/token`, tr({ audiences: ['api'] }));
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name: 'robot', namespace: 'default', creationTimestamp: null },
      spec: { audiences: ['api'], expirationSeconds: 3600, boundObjectRef: null },
    });
    const expires = Date.parse(r.body.status.expirationTimestamp);
    expect(expires - Date.now()).toBeGreaterThan(3500_000);
    const token: string = r.body.status.token;
    expect(token.split('.')).toHaveLength(3);
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    expect(claims.sub).toBe('system:serviceaccount:default:robot');
    // the server authenticates it: a request with it is served, the request log names the ServiceAccount
    expect((await t.req('GET', SAS, undefined, { authorization: `Bearer ${token}` })).status).toBe(200);
    expect(t.server.requestLog.at(-1)?.user).toBe('system:serviceaccount:default:robot');
  });
});
