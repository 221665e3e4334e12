/**
 * ValidatingAdmissionPolicy with bindings on envtest's write path, with kube-apiserver 1.32's Status: a policy
 * matching configmaps and a custom resource, bound with Deny, refuses a bad object after schema validation with
 * `configmaps "bad" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: <message>`
 * (422 Invalid, or the validation's reason), using message, messageExpression, the default `failed expression`,
 * variables, matchConditions, namespaceSelector, failurePolicy, and a binding without Deny.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, type Json, WIDGETS } from '../support/cr-validation-cases.js';
import { startTestServer, type TestServer } from './helpers.js';

const AR = '/apis/admissionregistration.k8s.io/v1';
const CM = '/api/v1/namespaces/default/configmaps';
const cm = (name: string, data: Json, labels?: Json) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(labels ? { labels } : {}) },
  data,
});

describe('ValidatingAdmissionPolicy', () => {
  let t: TestServer;
  const policy = (name: string, spec: Json) =>
    t.req('POST', `${AR}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec,
    });
  const binding = (name: string, policyName: string, extra: Json = {}) =>
    t.req('POST', `${AR}/validatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name },
      spec: { policyName, validationActions: ['Deny'], ...extra },
    });
  const cmRules = {
    resourceRules: [
      { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] },
    ],
  };
  beforeAll(async () => {
    t = await startTestServer();
    expect(
      (
        await policy('cm-size', {
          matchConstraints: cmRules,
          variables: [{ name: 'keys', expression: 'has(object.data) ? object.data.size() : 0' }],
          matchConditions: [
            {
              name: 'not-exempt',
              expression: "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)",
            },
          ],
          validations: [
            { expression: 'variables.keys <= 2', message: 'at most 2 keys' },
            {
              expression: "!has(object.data.mode) || object.data.mode in ['a', 'b']",
              messageExpression: "'mode ' + object.data.mode + ' is not a or b'",
            },
            { expression: "!has(object.data.owner) || object.data.owner != 'root'", reason: 'Forbidden' },
            { expression: "!has(object.data.x) || object.data.x.startsWith('ok')" },
          ],
        })
      ).status,
    ).toBe(201);
    expect((await binding('cm-size-binding', 'cm-size')).status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
  });

  it('denies with the message, 422 Invalid and one cause', async () => {
    const r = await t.req('POST', CM, cm('bad', { a: '1', b: '2', c: '3' }));
    expect(r.status).toBe(422);
    const text =
      "ValidatingAdmissionPolicy 'cm-size' with binding 'cm-size-binding' denied request: at most 2 keys";
    expect(r.body).toMatchObject({
      reason: 'Invalid',
      code: 422,
      message: `configmaps "bad" is forbidden: ${text}`,
      details: { name: 'bad', kind: 'configmaps', causes: [{ message: text }] },
    });
  });

  it('uses messageExpression, reason and the default failed-expression message', async () => {
    const m = await t.req('POST', CM, cm('m', { mode: 'z' }));
    expect(m.body.message).toBe(
      "configmaps \"m\" is forbidden: ValidatingAdmissionPolicy 'cm-size' with binding 'cm-size-binding' denied request: mode z is not a or b",
    );
    const f = await t.req('POST', CM, cm('f', { owner: 'root' }));
    expect([f.status, f.body.reason]).toEqual([403, 'Forbidden']);
    const d = await t.req('POST', CM, cm('d', { x: 'no' }));
    expect(d.body.message).toBe(
      "configmaps \"d\" is forbidden: ValidatingAdmissionPolicy 'cm-size' with binding 'cm-size-binding' denied request: failed expression: !has(object.data.x) || object.data.x.startsWith('ok')",
    );
  });

  it('skips objects a matchCondition excludes, and admits good objects and updates', async () => {
    expect(
      (await t.req('POST', CM, cm('exempt', { a: '1', b: '2', c: '3' }, { exempt: 'yes' }))).status,
    ).toBe(201);
    const ok = await t.req('POST', CM, cm('ok', { a: '1' }));
    expect(ok.status).toBe(201);
    const up = await t.req('PUT', `${CM}/ok`, { ...ok.body, data: { a: '1', b: '2', c: '3' } });
    expect(up.status).toBe(422);
  });

  it('applies to custom resources, after schema validation, and honours Warn-only bindings and failurePolicy', async () => {
    expect(
      (await t.req('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', WIDGETS)).status,
    ).toBe(201);
    expect(
      (
        await policy('widget-size', {
          failurePolicy: 'Fail',
          matchConstraints: {
            resourceRules: [
              { apiGroups: [GROUP], apiVersions: ['*'], operations: ['*'], resources: ['widgets'] },
            ],
          },
          validations: [
            {
              expression: "object.spec.size < 5 && object.spec.name != 'bad'",
              message: 'small widgets only',
            },
          ],
        })
      ).status,
    ).toBe(201);
    expect((await binding('widget-size-binding', 'widget-size')).status).toBe(201);
    const path = `/apis/${GROUP}/v1/namespaces/default/widgets`;
    const w = (name: string, spec: Json) => ({
      apiVersion: `${GROUP}/v1`,
      kind: 'Widget',
      metadata: { name },
      spec,
    });
    const big = await t.req('POST', path, w('big', { size: 7, name: 'abc' }));
    expect(big.body.message).toBe(
      `widgets.${GROUP} "big" is forbidden: ValidatingAdmissionPolicy 'widget-size' with binding 'widget-size-binding' denied request: small widgets only`,
    );
    // schema validation first: an invalid size is the schema's 422
    const bad = await t.req('POST', path, w('bad', { size: 70, name: 'abc' }));
    expect(bad.body.message).toContain('should be less than or equal to 10');
    // a runtime error denies under Fail
    const noName = await t.req('POST', path, w('noname', { size: 1 }));
    expect(noName.status).toBe(422);
    expect(noName.body.message).toContain('resulted in error: no such key: name');
    // a Warn-only binding does not deny
    expect(
      (await policy('always-no', { matchConstraints: cmRules, validations: [{ expression: 'false' }] }))
        .status,
    ).toBe(201);
    expect((await binding('always-no-warn', 'always-no', { validationActions: ['Warn'] })).status).toBe(201);
    expect((await t.req('POST', CM, cm('warned', { a: '1' }))).status).toBe(201);
  });

  it('matches namespaces by the binding namespaceSelector', async () => {
    expect(
      (
        await policy('ns-only', {
          matchConstraints: cmRules,
          validations: [{ expression: "object.metadata.name != 'blocked'" }],
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await binding('ns-only-binding', 'ns-only', {
          matchResources: { namespaceSelector: { matchLabels: { env: 'prod' } } },
        })
      ).status,
    ).toBe(201);
    expect((await t.req('POST', CM, cm('blocked', { a: '1' }))).status).toBe(201);
    await t.req('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'prod', labels: { env: 'prod' } },
    });
    const r = await t.req('POST', '/api/v1/namespaces/prod/configmaps', cm('blocked', { a: '1' }));
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(
      "configmaps \"blocked\" is forbidden: ValidatingAdmissionPolicy 'ns-only' with binding 'ns-only-binding' denied request: failed expression: object.metadata.name != 'blocked'",
    );
  });
});
