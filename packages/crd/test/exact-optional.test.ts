// A kind from defineKind is used wherever kubeloop takes a kind, also in a project with
// `exactOptionalPropertyTypes` (a common strict setting): CustomObject's `metadata` must be exactly
// KubeObject's, not `V1ObjectMeta | undefined`, or `client.get(Kind, …)` and `controllerRbac({ for })` do not compile.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, expect, it } from 'vitest';

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// inside the package, so `@kubeloop/client` and `@kubeloop/crd` resolve from the workspace's node_modules
const dir = path.join(pkg, `.exact-optional-test-${process.pid}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The first line of each diagnostic, by file name, of one program over `files` (name → source). */
function typeErrors(
  files: Record<string, string>,
  exactOptionalPropertyTypes: boolean,
): Record<string, string[]> {
  mkdirSync(dir, { recursive: true });
  const paths = Object.entries(files).map(([name, source]) => {
    writeFileSync(path.join(dir, name), source);
    return path.join(dir, name);
  });
  const program = ts.createProgram(paths, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    exactOptionalPropertyTypes,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  });
  const out: Record<string, string[]> = Object.fromEntries(Object.keys(files).map((n) => [n, []]));
  for (const d of ts.getPreEmitDiagnostics(program))
    out[path.basename(d.file?.fileName ?? '?')]?.push(
      ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n')[0] ?? '',
    );
  return out;
}

const kindSource = `import { type Client, ConfigMap, type ObjectOf } from '@kubeloop/client';
import { controllerRbac, defineKind } from '@kubeloop/crd';
import { Type } from 'typebox';
export const G = defineKind({ group: 'x.example.com', version: 'v1', kind: 'G', spec: Type.Object({ a: Type.String() }) });
export async function read(c: Client): Promise<string> {
  const g: ObjectOf<typeof G> = await c.get(G, { namespace: 'n', name: 'g' });
  return g.spec.a;
}
export const rbac = controllerRbac({ name: 'g', for: G, owns: [ConfigMap] });
`;

// What a new user wrote first: validate() on an object literal, a webhook declaration on the kind, and the
// generated configurations passed straight to client.create / apply (they needed a cast while their type
// left apiVersion and kind optional).
const newUserSource = `import { type Client, kind } from '@kubeloop/client';
import { defineKind, validate } from '@kubeloop/crd';
import { AdmissionDeniedError, defineWebhook, webhookConfigurations, webhookManifests } from '@kubeloop/webhook';
import { Type } from 'typebox';
export const G = defineKind({ group: 'x.example.com', version: 'v1', kind: 'G', spec: Type.Object({ a: Type.String() }) });
export const errors = validate(G, { apiVersion: 'x.example.com/v1', kind: 'G', metadata: { name: 'g' }, spec: { a: 'x' } });
export const field: string | undefined = errors[0]?.field;
export const gWebhooks = defineWebhook({
  for: G,
  validator: { validateCreate(g) { if (g.spec.a === '') throw new AdmissionDeniedError('spec.a: empty'); return undefined; } },
  defaulter: { default(g) { g.spec.a ||= 'a'; } },
});
export async function install(c: Client): Promise<void> {
  for (const cfg of webhookConfigurations([gWebhooks.registration], { url: 'https://127.0.0.1:9443' }))
    await c.create(kind(cfg.apiVersion, cfg.kind), cfg);
  for (const m of webhookManifests([gWebhooks.registration], { url: 'https://127.0.0.1:9443' }))
    await c.apply(kind(m.apiVersion, m.kind), m, { fieldManager: 'install', force: true });
}
`;

// One program per setting (a program costs ~25 s of CPU on the shared box): the strict one also holds a
// file with a misspelt field, so the check is seen to fail.
it('a defineKind kind, validate() on an object literal and generated webhook manifests type-check under exactOptionalPropertyTypes', () => {
  const errors = typeErrors(
    {
      'use.ts': kindSource,
      'new-user-exact.ts': newUserSource,
      'wrong.ts': newUserSource.replace('g.spec.a ||=', 'g.spec.b ||='),
    },
    true,
  );
  expect(errors['use.ts']).toEqual([]);
  expect(errors['new-user-exact.ts']).toEqual([]);
  expect(errors['wrong.ts']?.join('\n')).toMatch(/Property 'b' does not exist/);
}, 120_000);

it('the same new-user code type-checks without exactOptionalPropertyTypes', () => {
  expect(typeErrors({ 'new-user.ts': newUserSource }, false)).toEqual({ 'new-user.ts': [] });
}, 120_000);
