import { type KubeObject, kind } from '@kubeloop/client';
import { onAbort } from '@kubeloop/core';
import fc from 'fast-check';
import jsonpatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import {
  AdmissionDeniedError,
  type AdmissionResponse,
  AdmissionWebhook,
  defaultingHandler,
  type TypedAdmissionContext,
  validatingHandler,
} from '../src/index.js';
import { admissionReview } from './support/tls.js';

interface Widget extends KubeObject {
  spec?: { size?: number; color?: string; tags?: string[] };
}
const Widget = kind<Widget>('example.com/v1', 'Widget');

async function run(wh: AdmissionWebhook, request: Record<string, unknown>): Promise<AdmissionResponse> {
  const reply = await wh.serve(JSON.stringify(admissionReview(request)));
  expect(reply.status).toBe(200);
  const body = reply.body as { apiVersion: string; kind: string; response: AdmissionResponse };
  expect(body.kind).toBe('AdmissionReview');
  expect(body.response.uid).toBe('uid-1');
  return body.response;
}

function patchOf(r: AdmissionResponse): jsonpatch.Operation[] {
  return r.patch ? JSON.parse(Buffer.from(r.patch, 'base64').toString('utf8')) : [];
}

const w = (spec: Widget['spec']): Widget => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w1', namespace: 'default' },
  spec,
});

describe('admission: Validator', () => {
  const seen: TypedAdmissionContext<Widget>[] = [];
  const validator = validatingHandler<Widget>(
    {
      validateCreate(obj, ctx) {
        seen.push(ctx);
        if ((obj.spec?.size ?? 0) <= 0)
          throw AdmissionDeniedError.invalid(Widget, obj.metadata?.name, [
            { field: 'spec.size', message: 'Invalid value: 0: must be positive' },
          ]);
        return obj.spec?.color ? [] : ['spec.color is unset; using blue'];
      },
      validateUpdate(oldObj, newObj) {
        if (oldObj.spec?.color && newObj.spec?.color !== oldObj.spec.color)
          throw new AdmissionDeniedError('spec.color is immutable', { warnings: ['color change refused'] });
      },
      validateDelete(obj) {
        if (obj.spec?.tags?.includes('protected')) throw new AdmissionDeniedError('protected widget');
        return undefined;
      },
    },
    Widget,
  );
  const wh = new AdmissionWebhook('validate-example-com-v1-widget', validator);

  it('allows with warnings, and the request attributes reach the handler', async () => {
    seen.length = 0;
    const r = await run(wh, { object: w({ size: 1 }), dryRun: true, subResource: '' });
    expect(r.allowed).toBe(true);
    expect(r.warnings).toEqual(['spec.color is unset; using blue']);
    const ctx = seen[0] as TypedAdmissionContext<Widget>;
    expect(ctx.operation).toBe('CREATE');
    expect(ctx.dryRun).toBe(true);
    expect(ctx.namespace).toBe('default');
    expect(ctx.subResource).toBeUndefined();
    expect(ctx.userInfo.username).toBe('alice');
    expect(Object.isFrozen(ctx.request.object)).toBe(true);
  });

  it('a typed denial answers its code, reason, message and field causes', async () => {
    const r = await run(wh, { object: w({ size: 0 }) });
    expect(r.allowed).toBe(false);
    expect(r.status).toEqual({
      status: 'Failure',
      code: 422,
      reason: 'Invalid',
      message: 'Widget.example.com "w1" is invalid: spec.size: Invalid value: 0: must be positive',
      details: {
        group: 'example.com',
        kind: 'Widget',
        name: 'w1',
        causes: [
          { reason: 'FieldValueInvalid', field: 'spec.size', message: 'Invalid value: 0: must be positive' },
        ],
      },
    });
  });

  it('UPDATE gets old and new object; DELETE gets the old one; warnings ride along a denial', async () => {
    const up = await run(wh, {
      operation: 'UPDATE',
      object: w({ color: 'red' }),
      oldObject: w({ color: 'blue' }),
    });
    expect(up.allowed).toBe(false);
    expect(up.status?.code).toBe(403);
    expect(up.status?.reason).toBe('Forbidden');
    expect(up.warnings).toEqual(['color change refused']);
    expect(
      (await run(wh, { operation: 'UPDATE', object: w({ color: 'red' }), oldObject: w({}) })).allowed,
    ).toBe(true);
    const del = await run(wh, { operation: 'DELETE', oldObject: w({ tags: ['protected'] }) });
    expect(del.allowed).toBe(false);
    expect(del.status?.message).toBe('protected widget');
    const missingOld = await run(wh, { operation: 'UPDATE', object: w({}) });
    expect(missingOld.status?.code).toBe(400);
  });

  it('a raw handler answering no result (sync or async) answers 500 naming the webhook, never a hang', async () => {
    for (const answer of [undefined, null, 'yes', {}]) {
      const sync = new AdmissionWebhook('validate-sync-bad', () => answer as never);
      const asyncBad = new AdmissionWebhook('validate-async-bad', async () => answer as never);
      for (const wh of [sync, asyncBad]) {
        const r = await run(wh, { object: w({}) });
        expect(r.allowed).toBe(false);
        expect(r.status?.code).toBe(500);
        expect(r.status?.message).toMatch(new RegExp(`webhook "${wh.name}" failed: handler answered`));
      }
    }
  });

  it('a validator answering at once and one answering through a promise give the same response', async () => {
    const at = (v: (o: Widget) => string[] | Promise<string[]>) =>
      new AdmissionWebhook('validate-x', validatingHandler<Widget>({ validateCreate: (o) => v(o) }));
    for (const warnings of [[], ['careful']]) {
      const sync = await run(
        at(() => warnings),
        { object: w({}) },
      );
      const later = await run(
        at(async () => warnings),
        { object: w({}) },
      );
      expect(sync).toEqual(later);
      expect(sync.status).toEqual({ code: 200 });
    }
  });

  it('an unexpected throw answers allowed:false code 500 naming the webhook', async () => {
    const boom = new AdmissionWebhook(
      'validate-boom',
      validatingHandler<Widget>({
        validateCreate() {
          throw new TypeError('cannot read properties of undefined');
        },
      }),
    );
    const r = await run(boom, { object: w({}) });
    expect(r.allowed).toBe(false);
    expect(r.status?.code).toBe(500);
    expect(r.status?.message).toBe('webhook "validate-boom" failed: cannot read properties of undefined');
  });

  it('a handler past its deadline answers 500 and its signal aborts (the ?timeout= lowers the deadline)', async () => {
    let aborted = false;
    const slow = new AdmissionWebhook(
      'validate-slow',
      (_req, ctx) =>
        new Promise((_, reject) => {
          onAbort(ctx.signal, () => {
            aborted = true;
            reject(new Error('gave up'));
          });
        }),
      { timeoutMs: 60_000 },
    );
    const reply = await slow.serve(JSON.stringify(admissionReview({ object: w({}) })), '150ms');
    const r = (reply.body as { response: AdmissionResponse }).response;
    expect(r.allowed).toBe(false);
    expect(r.status?.code).toBe(500);
    expect(r.status?.message).toMatch(/webhook "validate-slow" did not answer within 50 ms/);
    expect(aborted).toBe(true);
  });

  it("a handler's signal follows the server's stop, also when it is read after the stop", async () => {
    const stop = new AbortController();
    const seen: boolean[] = [];
    const webhook = new AdmissionWebhook('validate-stop', async (_req, ctx) => {
      seen.push(ctx.signal.aborted);
      stop.abort(new Error('server stopping'));
      seen.push(ctx.signal.aborted);
      return { allowed: true };
    });
    await webhook.serve(JSON.stringify(admissionReview({ object: w({}) })), null, stop.signal);
    const late = new AdmissionWebhook('validate-late', async (_req, ctx) => ({
      allowed: !ctx.signal.aborted,
    }));
    const reply = await late.serve(JSON.stringify(admissionReview({ object: w({}) })), null, stop.signal);
    expect(seen).toEqual([false, true]);
    expect((reply.body as { response: AdmissionResponse }).response.allowed).toBe(false);
  });

  it('answers the review in the apiVersion it came in (v1beta1 too)', async () => {
    const reply = await wh.serve(
      JSON.stringify(admissionReview({ object: w({ size: 2 }) }, 'admission.k8s.io/v1beta1')),
    );
    expect((reply.body as { apiVersion: string }).apiVersion).toBe('admission.k8s.io/v1beta1');
  });

  it.each([
    ['', /request body is empty/],
    ['{', /couldn't parse the AdmissionReview/],
    ['[]', /must be a JSON object/],
    [
      JSON.stringify({ ...admissionReview({}), apiVersion: 'admission.k8s.io/v2' }),
      /unsupported AdmissionReview apiVersion "admission.k8s.io\/v2"/,
    ],
    [
      JSON.stringify({ ...admissionReview({}), kind: 'ConversionReview' }),
      /kind: expected "AdmissionReview"/,
    ],
    [JSON.stringify(admissionReview({ uid: '' })), /request.uid: required/],
    [JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }), /request: required/],
    [JSON.stringify(admissionReview({ operation: 'PATCH' })), /request.operation: must be one of/],
    [JSON.stringify(admissionReview({ object: 'x' })), /request.object: must be an object/],
  ])('a malformed review %# answers 400 with a message', async (body, message) => {
    const reply = await wh.serve(body);
    expect(reply.status).toBe(400);
    expect((reply.body as { message: string }).message).toMatch(message);
  });
});

describe('admission: Defaulter', () => {
  it('mutates a copy; the library computes the JSON Patch; DELETE is allowed unseen', async () => {
    let calls = 0;
    const wh = new AdmissionWebhook(
      'mutate-example-com-v1-widget',
      defaultingHandler<Widget>(
        {
          default(obj) {
            calls++;
            obj.spec ??= {};
            obj.spec.color ??= 'blue';
            obj.metadata ??= {};
            obj.metadata.labels = { ...obj.metadata.labels, 'a/b~c': 'x' };
          },
        },
        Widget,
      ),
    );
    const original = w({ size: 1 });
    const r = await run(wh, { object: original });
    expect(r.allowed).toBe(true);
    expect(r.patchType).toBe('JSONPatch');
    const patched = jsonpatch.applyPatch(structuredClone(original), patchOf(r)).newDocument;
    expect(patched).toEqual({
      ...original,
      metadata: { ...original.metadata, labels: { 'a/b~c': 'x' } },
      spec: { size: 1, color: 'blue' },
    });
    const none = await run(wh, { operation: 'DELETE', oldObject: original });
    expect(none.allowed).toBe(true);
    expect(none.patch).toBeUndefined();
    expect(calls).toBe(1);
  });

  it('no change: allowed without a patch; the request object cannot be changed by the handler', async () => {
    let frozen = false;
    const wh = new AdmissionWebhook('m', async (req) => {
      frozen = Object.isFrozen(req.object) && Object.isFrozen((req.object as Widget).spec);
      return { allowed: true };
    });
    const same = new AdmissionWebhook('m2', defaultingHandler<Widget>({ default() {} }));
    expect((await run(same, { object: w({ size: 1 }) })).patch).toBeUndefined();
    await run(wh, { object: w({ size: 1 }) });
    expect(frozen).toBe(true);
  });

  it('property: applying the answered patch to the request object gives the defaulted copy', async () => {
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.string(),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 3 }),
        fc.dictionary(fc.string({ maxLength: 4 }), tie('value'), { maxKeys: 3 }),
      ),
    })).value;
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string({ maxLength: 4 }), json, { maxKeys: 4 }),
        fc.dictionary(fc.string({ maxLength: 4 }), json, { maxKeys: 4 }),
        fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }),
        async (spec, extra, drop) => {
          const obj = { ...w({}), spec } as Widget;
          const wh = new AdmissionWebhook(
            'mutate-prop',
            defaultingHandler<Widget>({
              default(o) {
                const s = o.spec as Record<string, unknown>;
                for (const k of drop) delete s[k];
                Object.assign(s, extra);
              },
            }),
          );
          const r = await run(wh, { object: obj });
          const expected = structuredClone(obj) as Widget;
          const s = expected.spec as Record<string, unknown>;
          for (const k of drop) delete s[k];
          Object.assign(s, structuredClone(extra));
          const patched = jsonpatch.applyPatch(structuredClone(obj), patchOf(r), true).newDocument;
          expect(patched).toEqual(expected);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a typed denial from a defaulter denies', async () => {
    const wh = new AdmissionWebhook(
      'mutate-deny',
      defaultingHandler<Widget>({
        default() {
          throw new AdmissionDeniedError('no defaults for you', { code: 400, reason: 'BadRequest' });
        },
      }),
    );
    const r = await run(wh, { object: w({}) });
    expect(r.allowed).toBe(false);
    expect(r.status).toMatchObject({ code: 400, reason: 'BadRequest', message: 'no defaults for you' });
  });
});

describe('admission: AdmissionDeniedError.invalid', () => {
  it('quotes an empty name for an object without one (a create by generateName), as the API server does', () => {
    const e = AdmissionDeniedError.invalid(Widget, undefined, [
      { field: 'spec.size', message: 'Invalid value: 0' },
    ]);
    expect(e.message).toBe('Widget.example.com "" is invalid: spec.size: Invalid value: 0');
    expect(e.code).toBe(422);
  });
});
