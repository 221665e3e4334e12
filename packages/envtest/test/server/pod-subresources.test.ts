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
describe('pod exec/attach/portforward/eviction (issue 18)', () => {
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

  it('a PodDisruptionBudget the disruption controller has not processed refuses the eviction (429)', async () => {
    expect((await t.req('POST', `${NS}/pods`, pod('ev2', { app: 'guarded' }))).status).toBe(201);
    const pdb = {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'guard' },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'guarded' } } },
    };
    expect((await t.req('POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets', pdb)).status).toBe(
      201,
    );
    const r = await t.req('POST', `${NS}/pods/ev2/eviction`, eviction('ev2'));
    expect(r.status).toBe(429);
    expect(r.body.message).toBe("Cannot evict pod as it would violate the pod's disruption budget.");
    expect(r.body.details.causes).toEqual([
      {
        reason: 'DisruptionBudget',
        message: 'The disruption budget guard is still being processed by the server.',
      },
    ]);
    expect((await t.req('GET', `${NS}/pods/ev2`)).status).toBe(200);
  });
});
