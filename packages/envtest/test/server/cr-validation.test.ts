/**
 * Custom resources refused as kube-apiserver 1.32 refuses them: every case of test/support/cr-validation-cases.ts
 * is written to envtest and its 422 Status compared, in strict mode, with the golden recorded from a real
 * kube-apiserver (test/golden/cr-validation/<case>.json; README there). Strict: status code, every Status field,
 * details.causes and the message exactly — except that when the real server reports several errors its order
 * follows Go map iteration (random), so several causes are compared as a set and the message as its prefix plus
 * the same `field: message` parts. A case without a golden is compared with the message read from the upstream
 * source. With RECORD_GOLDENS=1 USE_EXISTING_CLUSTER=true KUBECONFIG=… the same cases run against that server
 * and (re)write the goldens instead.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadRestConfigFromFiles } from '@kubeloop/config';
import { Agent, type Dispatcher, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer } from '../../src/index.js';
import { CASES, type Case, GADGETS, GROUP, type Json, WIDGETS } from '../support/cr-validation-cases.js';

const GOLDEN_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'golden', 'cr-validation');
const RECORD = process.env.RECORD_GOLDENS === '1' && process.env.USE_EXISTING_CLUSTER === 'true';
const NS = RECORD ? `envval-golden-${process.pid}` : 'default';

interface Target {
  req(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }>;
  close(): Promise<void>;
}

async function realTarget(): Promise<Target> {
  const kubeconfig = process.env.KUBECONFIG ?? '';
  const cfg = loadRestConfigFromFiles(kubeconfig.split(':').filter(Boolean));
  const caData = cfg.tlsClientConfig.caData;
  const ca = caData
    ? caData.includes('-----BEGIN')
      ? caData
      : Buffer.from(caData, 'base64').toString()
    : cfg.tlsClientConfig.caFile
      ? readFileSync(cfg.tlsClientConfig.caFile, 'utf8')
      : undefined;
  const dispatcher = new Agent({ connect: { ca, rejectUnauthorized: !cfg.tlsClientConfig.insecure } });
  const token =
    cfg.bearerToken ?? (cfg.bearerTokenFile ? readFileSync(cfg.bearerTokenFile, 'utf8').trim() : '');
  return {
    req: (method, path, body) => send(dispatcher, cfg.host, token, method, path, body),
    close: () => dispatcher.close(),
  };
}

async function envtestTarget(): Promise<Target> {
  const server = await startApiServer({});
  const dispatcher = new Agent({ connect: { ca: server.caPem } });
  return {
    req: (method, path, body) => send(dispatcher, server.url, server.token, method, path, body),
    close: async () => {
      await dispatcher.close();
      await server.stop();
    },
  };
}

async function send(
  dispatcher: Dispatcher,
  base: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const res = await request(new URL(path, base), {
    method: method as Dispatcher.HttpMethod,
    headers: {
      accept: 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    dispatcher,
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
}

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const objectPath = (c: Case) => `/apis/${GROUP}/v1/namespaces/${NS}/${c.plural}`;
const kindOf = (c: Case) => (c.plural === 'widgets' ? 'Widget' : 'Gadget');

async function waitEstablished(t: Target, plural: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const r = await t.req('GET', `/apis/${GROUP}/v1/namespaces/${NS}/${plural}`);
    if (r.status === 200) return;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`${plural} not served`);
}

/** Write one case; returns the final write's reply. */
async function runCase(t: Target, c: Case): Promise<{ status: number; body: Json }> {
  const obj = (spec: Json) => ({
    apiVersion: `${GROUP}/v1`,
    kind: kindOf(c),
    metadata: { name: c.name },
    spec,
  });
  if (!c.initial) return t.req('POST', objectPath(c), obj(c.spec));
  const created = await t.req('POST', objectPath(c), obj(c.initial));
  if (created.status !== 201) throw new Error(`initial object of ${c.name}: ${JSON.stringify(created.body)}`);
  const next = {
    ...obj(c.spec),
    metadata: { name: c.name, resourceVersion: created.body.metadata.resourceVersion },
  };
  return t.req('PUT', `${objectPath(c)}/${c.name}`, next);
}

function partsOf(causes: readonly Json[]): string[] {
  return causes.map((x) => `${x.field}: ${x.message}`);
}

/** Strict comparison with a recorded golden (several causes compared as a set, see the file comment). */
function expectLikeGolden(got: { status: number; body: Json }, golden: { status: number; body: Json }): void {
  expect(got.status).toBe(golden.status);
  const { message: gm, details: gd, ...grest } = golden.body;
  const { message: em, details: ed, ...erest } = got.body;
  expect(erest).toEqual(grest);
  const { causes: gc = [], ...gdRest } = gd ?? {};
  const { causes: ec = [], ...edRest } = ed ?? {};
  expect(edRest).toEqual(gdRest);
  if (gc.length <= 1) {
    expect(ec).toEqual(gc);
    expect(em).toBe(gm);
    return;
  }
  const key = (x: Json) => JSON.stringify(x);
  expect([...ec].map(key).sort()).toEqual([...gc].map(key).sort());
  const prefix = (gm as string).slice(0, (gm as string).indexOf(' is invalid: ') + 13);
  expect(gm).toBe(`${prefix}[${partsOf(gc).join(', ')}]`);
  expect(em).toBe(`${prefix}[${partsOf(ec).join(', ')}]`);
}

describe.skipIf(process.env.USE_EXISTING_CLUSTER === 'true' && !RECORD)(
  'custom resource validation (goldens)',
  () => {
    let t: Target;
    beforeAll(async () => {
      t = RECORD ? await realTarget() : await envtestTarget();
      if (RECORD) {
        await t.req('POST', '/api/v1/namespaces', {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: NS },
        });
        for (const c of [WIDGETS, GADGETS]) await t.req('DELETE', `${CRD_PATH}/${c.metadata.name}`);
      }
      for (const c of [WIDGETS, GADGETS]) {
        const r = await t.req('POST', CRD_PATH, c);
        if (r.status !== 201) throw new Error(`CRD ${c.metadata.name}: ${JSON.stringify(r.body)}`);
      }
      await waitEstablished(t, 'widgets');
      await waitEstablished(t, 'gadgets');
    }, 60_000);
    afterAll(async () => {
      if (RECORD) {
        for (const c of [WIDGETS, GADGETS]) await t.req('DELETE', `${CRD_PATH}/${c.metadata.name}`);
        await t.req('DELETE', `/api/v1/namespaces/${NS}`);
      }
      await t?.close();
    });

    it('has at least 30 invalid custom resources', () => {
      expect(CASES.length).toBeGreaterThanOrEqual(30);
    });

    for (const c of CASES) {
      it(`refuses ${c.name}`, async () => {
        const got = await runCase(t, c);
        const file = join(GOLDEN_DIR, `${c.name}.json`);
        if (RECORD) {
          mkdirSync(GOLDEN_DIR, { recursive: true });
          const body = { ...got.body, details: got.body?.details };
          writeFileSync(
            file,
            `${JSON.stringify({ case: c.name, request: { plural: c.plural, initial: c.initial, spec: c.spec }, status: got.status, body }, null, 2)}\n`,
          );
          return;
        }
        if (existsSync(file)) {
          const golden = JSON.parse(readFileSync(file, 'utf8'));
          expectLikeGolden(got, golden);
          return;
        }
        expect(got.status).toBe(422);
        expect(got.body.reason).toBe('Invalid');
        expect(got.body.details).toMatchObject({ name: c.name, group: GROUP, kind: kindOf(c) });
        expect(got.body.message).toBe(c.message);
      });
    }
  },
);
