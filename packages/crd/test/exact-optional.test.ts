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

it('a defineKind kind type-checks as a Kind under exactOptionalPropertyTypes', () => {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'use.ts');
  writeFileSync(
    file,
    `import { type Client, ConfigMap } from '@kubeloop/client';
import { controllerRbac, defineKind, type KindObject } from '@kubeloop/crd';
import { Type } from 'typebox';
export const G = defineKind({ group: 'x.example.com', version: 'v1', kind: 'G', spec: Type.Object({ a: Type.String() }) });
export async function read(c: Client): Promise<string> {
  const g: KindObject<typeof G> = await c.get(G, { namespace: 'n', name: 'g' });
  return g.spec.a;
}
export const rbac = controllerRbac({ name: 'g', for: G, owns: [ConfigMap] });
`,
  );
  const program = ts.createProgram([file], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    exactOptionalPropertyTypes: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  });
  const errors = ts
    .getPreEmitDiagnostics(program)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n')[0]);
  expect(errors).toEqual([]);
}, 120_000);
