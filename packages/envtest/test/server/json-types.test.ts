/**
 * Envtest stored built-in objects whose JSON types the real server refuses
 * (ConfigMap data numbers, Secret stringData numbers, `replicas: "3"`, `port: "80"`, label values that are not
 * strings). kube-apiserver decodes a body into the kind's Go struct (sigs.k8s.io/json, encoding/json's rules)
 * and answers 400 BadRequest `<Kind> in version "<v>" cannot be handled as a <Kind>: json: cannot unmarshal
 * <json type> into Go struct field <Struct>.<json path> of type <Go type>`. The class: every field of every
 * built-in kind, from the generated schema table.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseKeepingLiterals, quantityError } from '../../src/schema/go-decode.js';
import { badRequest, type Json, startTestServer, type TestServer } from './helpers.js';

const NS = '/api/v1/namespaces/default';
const APPS = '/apis/apps/v1/namespaces/default';

const tpl = (container: Record<string, unknown> = {}) => ({
  metadata: { labels: { app: 'a' } },
  spec: { containers: [{ name: 'c', image: 'nginx', ...container }] },
});
const deployment = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { selector: { matchLabels: { app: 'a' } }, template: tpl(), ...spec },
});

describe('JSON types of built-in kinds are checked as the Go decoder does', () => {
  let t: TestServer;
  // a fresh server per test: tests change objects others read
  beforeEach(async () => {
    t = await startTestServer();
  });
  afterEach(async () => {
    await t.close();
  });

  const cm = (name: string, extra: Record<string, unknown>) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name },
    ...extra,
  });
  const CM = 'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal';

  it.each([
    ['a number', { replicas: 3 }, 'number'],
    ['a boolean', { enabled: true }, 'bool'],
    ['an object', { nested: { a: 'b' } }, 'object'],
    ['an array', { list: ['a'] }, 'array'],
  ])('refuses ConfigMap data holding %s, and stores nothing', async (_what, data, json) => {
    const r = await t.req('POST', `${NS}/configmaps`, cm('cm-bad', { data }));
    expect(r.body).toEqual(badRequest(`${CM} ${json} into Go struct field ConfigMap.data of type string`));
    expect((await t.req('GET', `${NS}/configmaps/cm-bad`)).status).toBe(404);
  });

  it('refuses data that is not a map, and accepts null values and a null data', async () => {
    const r = await t.req('POST', `${NS}/configmaps`, cm('cm-str', { data: 'x' }));
    expect(r.body.message).toBe(`${CM} string into Go struct field ConfigMap.data of type map[string]string`);
    const ok = await t.req('POST', `${NS}/configmaps`, cm('cm-null', { data: { a: null, b: 'x' } }));
    expect(ok.status).toBe(201);
    expect((await t.req('POST', `${NS}/configmaps`, cm('cm-null2', { data: null }))).status).toBe(201);
  });

  it('refuses the same on update (PUT), keeping the stored object', async () => {
    const created = await t.req('POST', `${NS}/configmaps`, cm('cm-put', { data: { a: 'x' } }));
    expect(created.status).toBe(201);
    const r = await t.req('PUT', `${NS}/configmaps/cm-put`, { ...created.body, data: { a: 1 } });
    expect(r.body).toEqual(badRequest(`${CM} number into Go struct field ConfigMap.data of type string`));
    expect((await t.req('GET', `${NS}/configmaps/cm-put`)).body.data).toEqual({ a: 'x' });
  });

  it('names metadata fields by ObjectMeta (labels, annotations, finalizers, generation)', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ labels: { a: 1 } }, 'number into Go struct field ObjectMeta.metadata.labels of type string'],
      [
        { annotations: { a: false } },
        'bool into Go struct field ObjectMeta.metadata.annotations of type string',
      ],
      [{ labels: ['a'] }, 'array into Go struct field ObjectMeta.metadata.labels of type map[string]string'],
      [{ finalizers: [1] }, 'number into Go struct field ObjectMeta.metadata.finalizers of type string'],
      [{ generation: 'x' }, 'string into Go struct field ObjectMeta.metadata.generation of type int64'],
    ];
    for (const [meta, msg] of cases) {
      const r = await t.req('POST', `${NS}/configmaps`, cm('m', { metadata: { name: 'm', ...meta } }));
      expect(r.body).toEqual(badRequest(`${CM} ${msg}`));
    }
    const notObj = await t.req('POST', `${NS}/configmaps`, { ...cm('m', {}), metadata: 'm' });
    expect(notObj.body.message).toBe(
      `${CM} string into Go struct field ConfigMap.metadata of type v1.ObjectMeta`,
    );
  });

  it('refuses a Secret stringData number (plain string map) and a data value that is not a string', async () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } };
    const r = await t.req('POST', `${NS}/secrets`, { ...secret, stringData: { port: 8080 } });
    expect(r.body).toEqual(
      badRequest(
        'Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal number into Go struct field Secret.stringData of type string',
      ),
    );
    const d = await t.req('POST', `${NS}/secrets`, { ...secret, data: { k: true } });
    expect(d.body.message).toBe(
      'Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal bool into Go struct field Secret.data of type []uint8',
    );
    const ty = await t.req('POST', `${NS}/secrets`, { ...secret, type: 1 });
    expect(ty.body.message).toBe(
      'Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal number into Go struct field Secret.type of type v1.SecretType',
    );
  });

  it('refuses Deployment replicas "3" and a string containerPort, naming the innermost struct and the whole path', async () => {
    const D = 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal';
    const r = await t.req('POST', `${APPS}/deployments`, deployment('d1', { replicas: '3' }));
    expect(r.body).toEqual(
      badRequest(`${D} string into Go struct field DeploymentSpec.spec.replicas of type int32`),
    );
    const port = await t.req(
      'POST',
      `${APPS}/deployments`,
      deployment('d2', { template: tpl({ ports: [{ containerPort: '80' }] }) }),
    );
    expect(port.body.message).toBe(
      `${D} string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32`,
    );
    const cmd = await t.req(
      'POST',
      `${APPS}/deployments`,
      deployment('d3', { template: tpl({ command: ['sleep', 10] }) }),
    );
    expect(cmd.body.message).toBe(
      `${D} number into Go struct field Container.spec.template.spec.containers.command of type string`,
    );
    const ctrs = await t.req('POST', `${APPS}/deployments`, {
      ...deployment('d4', {}),
      spec: { selector: { matchLabels: { app: 'a' } }, template: { spec: { containers: 'c' } } },
    });
    expect(ctrs.body.message).toBe(
      `${D} string into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container`,
    );
    const spec = await t.req('POST', `${APPS}/deployments`, { ...deployment('d5', {}), spec: [] });
    expect(spec.body.message).toBe(
      `${D} array into Go struct field Deployment.spec of type v1.DeploymentSpec`,
    );
    expect((await t.req('GET', `${APPS}/deployments`)).body.items).toEqual([]);
  });

  it('refuses integers that are fractions or overflow int32, reporting the number', async () => {
    const D = 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal';
    const frac = await t.req('POST', `${APPS}/deployments`, deployment('f1', { replicas: 2.5 }));
    expect(frac.body.message).toBe(
      `${D} number 2.5 into Go struct field DeploymentSpec.spec.replicas of type int32`,
    );
    const big = await t.req('POST', `${APPS}/deployments`, deployment('f2', { replicas: 3000000000 }));
    expect(big.body.message).toBe(
      `${D} number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32`,
    );
    // an int64 field takes it
    const ok = await t.req(
      'POST',
      `${APPS}/deployments`,
      deployment('f3', {
        template: { ...tpl(), spec: { ...tpl().spec, terminationGracePeriodSeconds: 3000000000 } },
      }),
    );
    expect(ok.status).toBe(201);
  });

  it('sees integer literals as written in a JSON body: 3.0 and 1e3 are not int32 (strconv.ParseInt), quantities and floats take them', async () => {
    const D = 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal';
    const body = (replicas: string, cpu = '"1"') =>
      `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"lit"},"spec":{"replicas":${replicas},` +
      `"selector":{"matchLabels":{"app":"a"}},"template":{"metadata":{"labels":{"app":"a"}},` +
      `"spec":{"containers":[{"name":"c","image":"nginx:1.25","resources":{"limits":{"cpu":${cpu}}}}]}}}}`;
    const three = await t.req('POST', `${APPS}/deployments`, body('3.0'));
    expect(three.body).toEqual(
      badRequest(`${D} number 3.0 into Go struct field DeploymentSpec.spec.replicas of type int32`),
    );
    const exp = await t.req('POST', `${APPS}/deployments`, body('1e3'));
    expect(exp.body.message).toBe(
      `${D} number 1e3 into Go struct field DeploymentSpec.spec.replicas of type int32`,
    );
    const ok = await t.req('POST', `${APPS}/deployments`, body('3', '0.5'));
    expect(ok.status).toBe(201);
    expect(ok.body.spec.replicas).toBe(3);
  });

  it('refuses Service port "80"; int-or-string targetPort takes "http" and 8080 but not true or 1.5', async () => {
    const svc = (name: string, port: Record<string, unknown>) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name },
      spec: { ports: [port] },
    });
    const S = 'Service in version "v1" cannot be handled as a Service: json: cannot unmarshal';
    const r = await t.req('POST', `${NS}/services`, svc('s1', { port: '80' }));
    expect(r.body).toEqual(
      badRequest(`${S} string into Go struct field ServicePort.spec.ports.port of type int32`),
    );
    expect((await t.req('POST', `${NS}/services`, svc('s2', { port: 80, targetPort: 'http' }))).status).toBe(
      201,
    );
    expect((await t.req('POST', `${NS}/services`, svc('s3', { port: 80, targetPort: 8080 }))).status).toBe(
      201,
    );
    const b = await t.req('POST', `${NS}/services`, svc('s4', { port: 80, targetPort: true }));
    expect(b.body.message).toBe(
      `${S} bool into Go struct field ServicePort.spec.ports.targetPort of type int32`,
    );
    const f = await t.req('POST', `${NS}/services`, svc('s5', { port: 80, targetPort: 1.5 }));
    expect(f.body.message).toBe(
      `${S} number 1.5 into Go struct field ServicePort.spec.ports.targetPort of type int32`,
    );
    const proto = await t.req('POST', `${NS}/services`, svc('s6', { port: 80, protocol: 6 }));
    expect(proto.body.message).toBe(
      `${S} number into Go struct field ServicePort.spec.ports.protocol of type v1.Protocol`,
    );
  });

  it('takes numbers as quantities and refuses quantities that do not parse', async () => {
    const pod = (name: string, limits: unknown) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { containers: [{ name: 'c', image: 'x', resources: { limits } }] },
    });
    const ok = await t.req('POST', `${NS}/pods`, pod('q1', { cpu: 1, memory: '64Mi' }));
    expect(ok.status).toBe(201);
    const bad = await t.req('POST', `${NS}/pods`, pod('q2', { cpu: 'lots' }));
    expect(bad.body).toEqual(
      badRequest(
        'Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'',
      ),
    );
    const notMap = await t.req('POST', `${NS}/pods`, pod('q3', 'x'));
    expect(notMap.body.message).toBe(
      'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field ResourceRequirements.spec.containers.resources.limits of type v1.ResourceList',
    );
  });

  it('reports the first type error in document order; unknown fields are not type errors', async () => {
    const r = await t.req('POST', `${NS}/configmaps?fieldValidation=Strict`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'order', labels: { a: 1 } },
      unknownThing: 5,
      data: { a: 1 },
    });
    expect(r.body.message).toBe(
      `${CM} number into Go struct field ObjectMeta.metadata.labels of type string`,
    );
    const unknown = await t.req('POST', `${NS}/configmaps`, cm('unk', { data: { a: 'x' }, dataa: 5 }));
    expect(unknown.status).toBe(201);
  });

  it('a merge patch that leaves a wrong type is refused with 422 and a `patch` cause', async () => {
    expect((await t.req('POST', `${NS}/configmaps`, cm('cm-patch', { data: { a: 'x' } }))).status).toBe(201);
    const r = await t.req(
      'PATCH',
      `${NS}/configmaps/cm-patch`,
      { data: { a: 5 } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(r.status).toBe(422);
    expect(r.body.details.causes[0]).toMatchObject({ reason: 'FieldValueInvalid', field: 'patch' });
    expect(r.body.message).toMatch(
      /: json: cannot unmarshal number into Go struct field ConfigMap\.data of type string$/,
    );
    const got: Json = (await t.req('GET', `${NS}/configmaps/cm-patch`)).body;
    expect(got.data).toEqual({ a: 'x' });
  });
});

describe('resource.ParseQuantity errors', () => {
  it.each([
    ['1', undefined],
    ['100m', undefined],
    ['1.5Gi', undefined],
    ['1e3', undefined],
    ['+1E', undefined],
    ['.5', undefined],
    ['', 'format'],
    ['lots', 'format'],
    ['1Gb', 'format'],
    ['1 Gi', 'format'],
    ['1mm', 'suffix'],
    ['1e', 'suffix'],
  ])('%j → %s', (s, kind) => {
    const err = quantityError(s);
    if (kind === undefined) expect(err).toBeUndefined();
    else expect(err).toContain(kind === 'format' ? 'quantities must match' : "quantity's suffix");
  });
});

describe('parseKeepingLiterals', () => {
  it('parses as JSON.parse does, keeping the literal of numbers JavaScript would change', () => {
    const text = '{"a":[1,-2,"x\\"y",true,false,null,{"b":{}},[]],"c":"1.5e3","d":0}';
    expect(parseKeepingLiterals(text)).toEqual(JSON.parse(text));
    const raw = parseKeepingLiterals(' { "n" : 3.0 , "m": [1e3, 12345678901234567890] } ') as Record<
      string,
      unknown
    >;
    expect(raw.n).toMatchObject({ literal: '3.0', value: 3 });
    expect((raw.m as unknown[])[0]).toMatchObject({ literal: '1e3' });
    expect((raw.m as unknown[])[1]).toMatchObject({ literal: '12345678901234567890' });
    expect(parseKeepingLiterals('{"a":1')).toBeUndefined();
    expect(parseKeepingLiterals('{"a":1} x')).toBeUndefined();
  });
});
