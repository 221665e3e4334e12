/**
 * CRD rules compiled as kube-apiserver 1.32 compiles them when a CRD is created: every case of
 * test/support/crd-rule-cases.ts is created on envtest and the answer (201, or 422 with its message and causes)
 * compared exactly with the table recorded from a real kube-apiserver (test/golden/crd-rules/table.json; README
 * there). With RECORD_GOLDENS=1 USE_EXISTING_CLUSTER=true KUBECONFIG=… the cases run against that server and
 * rewrite the table instead (accepted CRDs are deleted again).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadRestConfigFromFiles } from '@kubeloop/config';
import { Agent, type Dispatcher, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer } from '../../src/index.js';
import { type Json, RULE_CASES, ruleCaseCrd } from '../support/crd-rule-cases.js';

const GOLDEN = join(dirname(fileURLToPath(import.meta.url)), '..', 'golden', 'crd-rules', 'table.json');
const RECORD = process.env.RECORD_GOLDENS === '1' && process.env.USE_EXISTING_CLUSTER === 'true';
const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

interface Target {
  req(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }>;
  close(): Promise<void>;
}

async function realTarget(): Promise<Target> {
  const cfg = loadRestConfigFromFiles((process.env.KUBECONFIG ?? '').split(':').filter(Boolean));
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

/** One row of the table: the case's schema and the server's answer to its CRD. */
export interface RuleRow {
  readonly case: string;
  readonly openAPIV3Schema: Json;
  readonly status: number;
  readonly message?: string;
  readonly causes?: readonly Json[];
}

/** Go prints a set pointer field of a rule (`OptionalOldSelf`, `Reason`) as an address, different every run. */
const addresses = (s: string) => s.replace(/\)\(0x[0-9a-f]+\)/g, ')(0x…)');

function normalized(row: RuleRow): RuleRow {
  return JSON.parse(addresses(JSON.stringify(row)));
}

async function create(t: Target, name: string): Promise<RuleRow> {
  const c = RULE_CASES.find((x) => x.name === name) as (typeof RULE_CASES)[number];
  const crd = ruleCaseCrd(c);
  const r = await t.req('POST', CRD_PATH, crd);
  if (r.status === 201) await t.req('DELETE', `${CRD_PATH}/${crd.metadata.name}`);
  return {
    case: c.name,
    openAPIV3Schema: crd.spec.versions[0].schema.openAPIV3Schema,
    status: r.status,
    ...(r.status === 201 ? {} : { message: r.body.message, causes: r.body.details?.causes ?? [] }),
  };
}

describe.skipIf(process.env.USE_EXISTING_CLUSTER === 'true' && !RECORD)(
  'CRD rule compilation (table recorded from kube-apiserver 1.32)',
  () => {
    let t: Target;
    const recorded: RuleRow[] = [];
    const table: RuleRow[] = existsSync(GOLDEN) ? JSON.parse(readFileSync(GOLDEN, 'utf8')) : [];
    beforeAll(async () => {
      t = RECORD ? await realTarget() : await envtestTarget();
    });
    afterAll(async () => {
      if (RECORD) {
        mkdirSync(dirname(GOLDEN), { recursive: true });
        writeFileSync(GOLDEN, `${JSON.stringify(recorded, null, 2)}\n`);
      }
      await t?.close();
    });

    it('the table has a row per case', () => {
      if (RECORD) return;
      expect(table.map((r) => r.case)).toEqual(RULE_CASES.map((c) => c.name));
    });

    for (const c of RULE_CASES) {
      it(`${c.name}`, async () => {
        const got = await create(t, c.name);
        if (RECORD) {
          recorded.push(got);
          return;
        }
        const row = table.find((r) => r.case === c.name);
        expect(row, 'recorded row').toBeDefined();
        expect(normalized(got)).toEqual(normalized(row as RuleRow));
      });
    }
  },
);
