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
import { type CelAstNode, type CelSchemaNode, celSizeType, estimateCelCost } from '@kubeloop/core/cel';
import { Environment } from '@marcbachmann/cel-js';
import { Agent, type Dispatcher, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer } from '../../src/index.js';
import { COST_CASES } from '../support/crd-cost-cases.js';
import { type Json, RULE_CASES, type RuleCase, ruleCaseCrd } from '../support/crd-rule-cases.js';

const GOLDENS = join(dirname(fileURLToPath(import.meta.url)), '..', 'golden', 'crd-rules');
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

/**
 * Which of several equally expensive rules the server names as contributing to a CRD's total cost follows Go's map
 * order (random): those paths are compared as `<rule>`, their number exactly.
 */
const contributors = (s: string) =>
  s.replace(
    /spec\.[^\s"]*?\.rule(\\?"?,?\s*\\?"?(?:message\\?"?:\s*\\?"?)?:?\s*Forbidden: contributed)/g,
    '<rule>$1',
  );

function normalized(row: RuleRow): RuleRow {
  const json = JSON.parse(addresses(JSON.stringify(row))) as RuleRow;
  return {
    ...json,
    ...(json.message ? { message: contributors(json.message) } : {}),
    ...(json.causes
      ? {
          causes: json.causes.map((c) =>
            String(c.message).startsWith('Forbidden: contributed') ? { ...c, field: '<rule>' } : c,
          ),
        }
      : {}),
  };
}

async function create(t: Target, c: RuleCase): Promise<RuleRow> {
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

/**
 * The cases whose answer envtest does not reproduce on purpose: rules using a library whose cost the estimator
 * does not know, which envtest accepts (it must never refuse what the server accepts).
 */
const ACCEPTED_UNKNOWN = new Set(['cost-unknown-format']);

for (const [title, file, cases] of [
  ['CRD rule compilation', 'table.json', RULE_CASES],
  ['CRD rule estimated cost', 'cost-table.json', COST_CASES],
] as const)
  describe.skipIf(process.env.USE_EXISTING_CLUSTER === 'true' && !RECORD)(
    `${title} (table recorded from kube-apiserver 1.32)`,
    () => {
      const GOLDEN = join(GOLDENS, file);
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
        expect(table.map((r) => r.case)).toEqual(cases.map((c) => c.name));
      });

      for (const c of cases) {
        it(`${c.name}`, async () => {
          const got = await create(t, c);
          if (RECORD) {
            recorded.push(got);
            return;
          }
          const row = table.find((r) => r.case === c.name);
          expect(row, 'recorded row').toBeDefined();
          if (ACCEPTED_UNKNOWN.has(c.name)) {
            expect(got.status).toBe(201);
            return;
          }
          const want = normalized(row as RuleRow);
          const have = normalized(got);
          if ((want.causes?.length ?? 0) <= 1) {
            expect(have).toEqual(want);
            return;
          }
          // several errors across properties come in Go's map order on the server (random): compare them as sets
          const key = (x: Json) => JSON.stringify(x);
          expect({ ...have, causes: [], message: '' }).toEqual({ ...want, causes: [], message: '' });
          expect([...(have.causes ?? [])].map(key).sort()).toEqual([...(want.causes ?? [])].map(key).sort());
          const parts = (m = '') =>
            m
              .slice(m.indexOf(' is invalid: [') + 14, -1)
              .split(/, (?=spec\.|<rule>)/)
              .sort();
          expect(parts(have.message)).toEqual(parts(want.message));
        });
      }
    },
  );

describe('the cost estimator knows every construct of the cost table', () => {
  // a rule the estimator does not know is accepted whatever its cost: the table's refusals prove the estimates it
  // makes, this proves it makes one for every other case too (so an accepted row is not accepted by ignorance)
  const env = new Environment({ enableOptionalTypes: true });
  const estimates = (s: Json, root: boolean, out: { rule: string; known: boolean }[]) => {
    const type = celSizeType(s as CelSchemaNode, root);
    for (const r of s['x-kubernetes-validations'] ?? [])
      for (const src of [r.rule, r.messageExpression].filter(Boolean)) {
        const ast = (env.parse(src) as unknown as { ast: CelAstNode }).ast;
        out.push({ rule: src, known: type !== undefined && estimateCelCost(ast, type) !== undefined });
      }
    for (const p of Object.values(s.properties ?? {})) estimates(p, false, out);
    if (s.items) estimates(s.items, false, out);
    if (typeof s.additionalProperties === 'object') estimates(s.additionalProperties, false, out);
    return out;
  };
  for (const c of COST_CASES)
    it(`${c.name}: ${ACCEPTED_UNKNOWN.has(c.name) ? 'not estimated' : 'estimated'}`, () => {
      const found = estimates(ruleCaseCrd(c).spec.versions[0].schema.openAPIV3Schema, true, []);
      expect(found.length).toBeGreaterThan(0);
      expect(found.every((f) => f.known)).toBe(!ACCEPTED_UNKNOWN.has(c.name));
    });
});
