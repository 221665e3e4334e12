/**
 * envtest's admission chain against a hand-written webhook server (no @kubeloop/webhook: envtest is tested on
 * its own): rule matching with subresources and `*`, matchPolicy, reinvocation, review versions, bad replies
 * under failurePolicy, warnings as headers.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CertificateAuthority } from '../../src/certs.js';
import { type Json, startTestServer, type TestServer } from './helpers.js';

type Reply = (review: Json) => Json;
const calls: { path: string; review: Json }[] = [];
const replies = new Map<string, Reply>();
let hooks: Server;
let base = '';
let caBundle = '';
let t: TestServer;

const allow: Reply = (r) => ({ uid: r.request.uid, allowed: true });

/**
 * The conversion webhook of the Widget CRD: v1beta1 `spec.n` / `spec.colour` are v1 `spec.size` / `spec.color`
 * (schemas that differ, so an object relabelled instead of converted shows).
 */
function convert(review: Json): Json {
  const { uid, desiredAPIVersion, objects } = review.request;
  const toV1 = desiredAPIVersion === 'example.com/v1';
  const convertedObjects = objects.map((o: Json) => {
    const { n, colour, size, color, ...rest } = o.spec ?? {};
    const spec = toV1
      ? {
          ...rest,
          ...(n !== undefined ? { size: n } : {}),
          ...(colour !== undefined ? { color: colour } : {}),
        }
      : {
          ...rest,
          ...(size !== undefined ? { n: size } : {}),
          ...(color !== undefined ? { colour: color } : {}),
        };
    return { ...o, apiVersion: desiredAPIVersion, spec };
  });
  return { uid, result: { status: 'Success' }, convertedObjects };
}

beforeAll(async () => {
  const ca = await CertificateAuthority.create('webhook-test-ca');
  const serving = await ca.issueServing(['127.0.0.1']);
  caBundle = Buffer.from(ca.certPem).toString('base64');
  hooks = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString());
      const path = new URL(req.url ?? '/', 'https://x').pathname;
      calls.push({ path, review });
      res.writeHead(200, { 'content-type': 'application/json' });
      if (path === '/convert') {
        res.end(
          JSON.stringify({
            apiVersion: review.apiVersion,
            kind: 'ConversionReview',
            response: convert(review),
          }),
        );
        return;
      }
      const response = (replies.get(path) ?? allow)(review);
      res.end(
        JSON.stringify(
          response === null
            ? { nonsense: true }
            : { apiVersion: review.apiVersion, kind: 'AdmissionReview', response },
        ),
      );
    });
  });
  await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', () => r()));
  base = `https://127.0.0.1:${(hooks.address() as AddressInfo).port}`;
  t = await startTestServer();
  const version = (name: string, storage: boolean) => ({
    name,
    served: true,
    storage,
    schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
    subresources: { status: {} },
  });
  const crd = await t.req('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.example.com' },
    spec: {
      group: 'example.com',
      names: { kind: 'Gadget', plural: 'gadgets', singular: 'gadget', listKind: 'GadgetList' },
      scope: 'Namespaced',
      versions: [version('v1', true), version('v1beta1', false)],
    },
  });
  expect(crd.status).toBe(201);
  await vi.waitFor(async () => expect((await t.req('GET', '/apis/example.com/v1/gadgets')).status).toBe(200));
  const widgets = await t.req('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
      scope: 'Namespaced',
      versions: [version('v1', true), version('v1beta1', false)],
      conversion: {
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: `${base}/convert`, caBundle } },
      },
    },
  });
  expect(widgets.status).toBe(201);
  await vi.waitFor(async () => expect((await t.req('GET', '/apis/example.com/v1/widgets')).status).toBe(200));
});

afterAll(async () => {
  await t?.close();
  await new Promise((r) => hooks?.close(r));
});

const V = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const M = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';

function hook(name: string, path: string, rules: Json[], extra: Json = {}): Json {
  return {
    name,
    clientConfig: { url: `${base}${path}`, caBundle },
    rules,
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    timeoutSeconds: 5,
    ...extra,
  };
}

const rule = (resources: string[], versions = ['v1'], operations = ['CREATE', 'UPDATE']): Json => ({
  apiGroups: ['example.com'],
  apiVersions: versions,
  operations,
  resources,
});

async function config(collection: string, name: string, webhooks: Json[]): Promise<() => Promise<void>> {
  const kind = collection === V ? 'ValidatingWebhookConfiguration' : 'MutatingWebhookConfiguration';
  const r = await t.req('POST', collection, {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind,
    metadata: { name },
    webhooks,
  });
  expect(r.status).toBe(201);
  return async () => {
    await t.req('DELETE', `${collection}/${name}`);
  };
}

const gadget = (name: string, version = 'v1', labels: Record<string, string> = {}): Json => ({
  apiVersion: `example.com/${version}`,
  kind: 'Gadget',
  metadata: { name, labels },
  spec: { n: 1 },
});
const G = (version = 'v1') => `/apis/example.com/${version}/namespaces/default/gadgets`;

describe('envtest admission webhooks', () => {
  it('"*" matches resources but not subresources; "gadgets/status" and "*/*" match status writes', async () => {
    const done = await config(V, 'rules', [
      hook('star.example.com', '/star', [rule(['*'])]),
      hook('status.example.com', '/status', [rule(['gadgets/status'])]),
      hook('all.example.com', '/all', [rule(['*/*'])]),
    ]);
    try {
      calls.length = 0;
      const created = await t.req('POST', G(), gadget('r1'));
      expect(created.status).toBe(201);
      expect(calls.map((c) => c.path).sort()).toEqual(['/all', '/star']);
      calls.length = 0;
      const st = await t.req('PUT', `${G()}/r1/status`, { ...created.body, status: { ok: true } });
      expect(st.status).toBe(200);
      expect(calls.map((c) => c.path).sort()).toEqual(['/all', '/status']);
      const review = calls[0]?.review.request;
      expect(review.subResource).toBe('status');
      expect(review.operation).toBe('UPDATE');
      expect(review.oldObject.metadata.name).toBe('r1');
      expect(review.userInfo.username).toBe('envtest-admin');
    } finally {
      await done();
    }
  });

  it('matchPolicy Equivalent sends a request through another version converted to the rule version; Exact does not', async () => {
    const done = await config(V, 'match', [
      hook('equivalent.example.com', '/equivalent', [rule(['gadgets'], ['v1'])]),
      hook('exact.example.com', '/exact', [rule(['gadgets'], ['v1'])], { matchPolicy: 'Exact' }),
    ]);
    try {
      calls.length = 0;
      expect((await t.req('POST', G('v1beta1'), gadget('m1', 'v1beta1'))).status).toBe(201);
      expect(calls.map((c) => c.path)).toEqual(['/equivalent']);
      const req = calls[0]?.review.request;
      expect(req.kind).toEqual({ group: 'example.com', version: 'v1', kind: 'Gadget' });
      expect(req.requestKind).toEqual({ group: 'example.com', version: 'v1beta1', kind: 'Gadget' });
      expect(req.object.apiVersion).toBe('example.com/v1');
    } finally {
      await done();
    }
  });

  it('matchPolicy Equivalent on a CRD with a conversion webhook: the webhooks get the object converted, not relabelled, and a mutation comes back through the conversion', async () => {
    const W = (version: string) => `/apis/example.com/${version}/namespaces/default/widgets`;
    const widgetRule = (operations = ['CREATE', 'UPDATE']) => ({ ...rule(['widgets'], ['v1'], operations) });
    replies.set('/paint', (r) => ({
      uid: r.request.uid,
      allowed: true,
      patchType: 'JSONPatch',
      patch: Buffer.from(JSON.stringify([{ op: 'add', path: '/spec/color', value: 'blue' }])).toString(
        'base64',
      ),
    }));
    const m = await config(M, 'paint', [hook('paint.example.com', '/paint', [widgetRule()])]);
    const v = await config(V, 'look', [
      hook('look.example.com', '/look', [widgetRule(['CREATE', 'UPDATE', 'DELETE'])]),
    ]);
    const reviewOf = (path: string) => calls.filter((c) => c.path === path).map((c) => c.review.request);
    try {
      calls.length = 0;
      const created = await t.req('POST', W('v1beta1'), {
        apiVersion: 'example.com/v1beta1',
        kind: 'Widget',
        metadata: { name: 'w1' },
        spec: { n: 3 },
      });
      expect(created.status).toBe(201);
      // the mutating webhook saw the v1 form the conversion webhook makes, and its patch (v1 spec.color)
      // reached the stored object through the conversion back
      const [mutating] = reviewOf('/paint');
      expect(mutating.kind).toEqual({ group: 'example.com', version: 'v1', kind: 'Widget' });
      expect(mutating.requestKind).toEqual({ group: 'example.com', version: 'v1beta1', kind: 'Widget' });
      expect(mutating.object.apiVersion).toBe('example.com/v1');
      expect(mutating.object.spec).toEqual({ size: 3 });
      expect(created.body.spec).toEqual({ n: 3, colour: 'blue' });
      expect((await t.req('GET', `${W('v1')}/w1`)).body.spec).toEqual({ size: 3, color: 'blue' });
      const [validating] = reviewOf('/look');
      expect(validating.object.apiVersion).toBe('example.com/v1');
      expect(validating.object.spec).toEqual({ size: 3, color: 'blue' });
      // an update through v1beta1: the old object too is sent in the v1 form
      calls.length = 0;
      const updated = await t.req('PUT', `${W('v1beta1')}/w1`, {
        ...created.body,
        spec: { n: 4, colour: 'red' },
      });
      expect(updated.status).toBe(200);
      const [update] = reviewOf('/look');
      expect(update.operation).toBe('UPDATE');
      expect(update.oldObject.spec).toEqual({ size: 3, color: 'blue' });
      expect(update.object.spec).toEqual({ size: 4, color: 'blue' });
      // a delete through v1beta1: the object being deleted, in the v1 form
      calls.length = 0;
      expect((await t.req('DELETE', `${W('v1beta1')}/w1`)).status).toBe(200);
      const [deleted] = reviewOf('/look');
      expect(deleted.operation).toBe('DELETE');
      expect(deleted.oldObject.apiVersion).toBe('example.com/v1');
      expect(deleted.oldObject.spec).toEqual({ size: 4, color: 'blue' });
    } finally {
      replies.clear();
      await m();
      await v();
    }
  });

  it('mutating webhooks run in configuration-name order; IfNeeded runs again after a later change', async () => {
    const patch = (ops: Json[]): string => Buffer.from(JSON.stringify(ops)).toString('base64');
    replies.set('/first', (r) => ({
      uid: r.request.uid,
      allowed: true,
      patchType: 'JSONPatch',
      patch: patch([
        {
          op: 'add',
          path: '/metadata/annotations',
          value: { seen: String(Object.keys(r.request.object.metadata.labels ?? {}).length) },
        },
      ]),
    }));
    replies.set('/second', (r) => ({
      uid: r.request.uid,
      allowed: true,
      warnings: ['second was here'],
      patchType: 'JSONPatch',
      patch: patch([{ op: 'add', path: '/metadata/labels/second', value: 'yes' }]),
    }));
    const a = await config(M, 'a-first', [
      hook('first.example.com', '/first', [rule(['gadgets'])], { reinvocationPolicy: 'IfNeeded' }),
    ]);
    const b = await config(M, 'b-second', [hook('second.example.com', '/second', [rule(['gadgets'])])]);
    try {
      calls.length = 0;
      const r = await t.req('POST', G(), gadget('mu1', 'v1', { x: '1' }));
      expect(r.status).toBe(201);
      expect(calls.map((c) => c.path)).toEqual(['/first', '/second', '/first']);
      expect(r.body.metadata.labels).toEqual({ x: '1', second: 'yes' });
      // the reinvoked first webhook saw the second's label
      expect(r.body.metadata.annotations).toEqual({ seen: '2' });
      expect(r.headers.warning).toBe('299 - "second was here"');
    } finally {
      replies.clear();
      await a();
      await b();
    }
  });

  it('a v1beta1-only webhook gets a v1beta1 review; an invalid reply fails under Fail and passes under Ignore', async () => {
    replies.set('/beta', (r) => ({ uid: 'not-the-uid', allowed: true, apiVersion: r.apiVersion }));
    const done = await config(V, 'beta', [
      hook('beta.example.com', '/beta', [rule(['gadgets'])], { admissionReviewVersions: ['v1beta1'] }),
    ]);
    try {
      calls.length = 0;
      const r = await t.req('POST', G(), gadget('b1'));
      expect(calls[0]?.review.apiVersion).toBe('admission.k8s.io/v1beta1');
      expect(r.status).toBe(500);
      expect(r.body.message).toMatch(
        /^Internal error occurred: failed calling webhook "beta.example.com": received invalid webhook response: expected response.uid="[^"]+", got "not-the-uid"$/,
      );
      const cur = await t.req('GET', `${V}/beta`);
      cur.body.webhooks[0].failurePolicy = 'Ignore';
      expect((await t.req('PUT', `${V}/beta`, cur.body)).status).toBe(200);
      expect((await t.req('POST', G(), gadget('b2'))).status).toBe(201);
    } finally {
      replies.clear();
      await done();
    }
  });

  it('a denial keeps the webhook Status code, reason and causes; a code under 400 becomes 400', async () => {
    replies.set('/deny', (r) => ({
      uid: r.request.uid,
      allowed: false,
      status:
        r.request.name === 'low'
          ? { code: 200, message: 'nope' }
          : {
              code: 422,
              reason: 'Invalid',
              message: 'bad n',
              details: { causes: [{ field: 'spec.n', message: 'bad' }] },
            },
    }));
    const done = await config(V, 'deny', [
      hook('deny.example.com', '/deny', [rule(['gadgets'], ['v1'], ['CREATE', 'DELETE'])]),
    ]);
    try {
      const r = await t.req('POST', G(), gadget('d1'));
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({
        kind: 'Status',
        status: 'Failure',
        code: 422,
        reason: 'Invalid',
        message: 'admission webhook "deny.example.com" denied the request: bad n',
        details: { causes: [{ field: 'spec.n', message: 'bad' }] },
      });
      const low = await t.req('POST', G(), gadget('low'));
      expect(low.status).toBe(400);
      expect(low.body.message).toBe('admission webhook "deny.example.com" denied the request: nope');
    } finally {
      replies.clear();
      await done();
    }
  });
});
