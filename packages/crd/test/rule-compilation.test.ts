/**
 * @kubeloop/crd compiles CEL rules as kube-apiserver 1.32 does: every row of the table recorded from a real server
 * (packages/envtest/test/golden/crd-rules/table.json, cases in packages/envtest/test/support/crd-rule-cases.ts) is
 * compiled with the same check `customResourceDefinition` runs; a schema the server accepted must compile, one it
 * refused for a rule must throw a CelCompileError naming the same undefined field.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkRules } from '../src/cel.js';
import { CelCompileError } from '../src/errors.js';
import type { JSONSchemaProps } from '../src/types.js';

interface Row {
  readonly case: string;
  readonly openAPIV3Schema: JSONSchemaProps;
  readonly status: number;
  readonly message?: string;
}

const TABLE: readonly Row[] = JSON.parse(
  readFileSync(new URL('../../envtest/test/golden/crd-rules/table.json', import.meta.url), 'utf8'),
);

function compile(schema: JSONSchemaProps): unknown {
  try {
    checkRules(schema, '');
    return undefined;
  } catch (err) {
    return err;
  }
}

describe('CEL rule compilation against the real-server table', () => {
  it('has the recorded table', () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(40);
  });

  for (const row of TABLE) {
    it(`${row.case}: ${row.status === 201 ? 'compiles' : 'is refused'} as on kube-apiserver`, () => {
      const err = compile(row.openAPIV3Schema);
      if (row.status === 201) {
        expect(err).toBeUndefined();
        return;
      }
      expect(err).toBeInstanceOf(CelCompileError);
      const field = /undefined field '([^']+)'/.exec(row.message ?? '')?.[1];
      if (field) expect((err as CelCompileError).detail).toContain(`undefined field '${field}'`);
    });
  }
});
