/**
 * @kubeloop/crd compiles CEL rules as kube-apiserver 1.32 does: every row of the table recorded from a real server
 * (packages/envtest/test/golden/crd-rules/table.json, cases in packages/envtest/test/support/crd-rule-cases.ts) is
 * compiled with the same check `customResourceDefinition` runs; a schema the server accepted must compile, one it
 * refused for a rule must throw a CelCompileError naming the same undefined field.
 */
import { readFileSync } from 'node:fs';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { checkRules } from '../src/cel.js';
import { CelCompileError, SchemaError } from '../src/errors.js';
import { customResourceDefinition, defineKind, WithRules } from '../src/index.js';
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

const COST_TABLE: readonly Row[] = JSON.parse(
  readFileSync(new URL('../../envtest/test/golden/crd-rules/cost-table.json', import.meta.url), 'utf8'),
);
/** Rules whose library this estimator does not cost: accepted here whatever the server said. */
const UNKNOWN_COST = new Set(['cost-unknown-format']);

describe('estimated rule cost against the real-server table', () => {
  it('has the recorded table', () => {
    expect(COST_TABLE.length).toBeGreaterThanOrEqual(30);
  });

  for (const row of COST_TABLE) {
    it(`${row.case}: ${row.status === 201 || UNKNOWN_COST.has(row.case) ? 'accepted' : 'refused'} as on kube-apiserver`, () => {
      const err = compile(row.openAPIV3Schema);
      if (row.status === 201 || UNKNOWN_COST.has(row.case)) {
        expect(err).toBeUndefined();
        return;
      }
      expect(err).toBeInstanceOf(SchemaError);
      // the first Forbidden error of the server (crd stops at the first): same kind of cost, same factor
      const first =
        /(estimated (?:rule|messageExpression) cost|x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema) exceeds budget by factor of (\S+)/.exec(
          row.message ?? '',
        );
      expect(first, row.message).not.toBeNull();
      expect((err as Error).message).toContain(`${first?.[1]} exceeds budget by factor of ${first?.[2]}`);
    });
  }
});

describe('customResourceDefinition and the estimated cost', () => {
  const kind = (maxLength: number, maxItems?: number) =>
    defineKind({
      group: 'x.example.com',
      version: 'v1',
      kind: 'Cost',
      spec: Type.Object({
        l: Type.Array(WithRules(Type.String({ maxLength }), [{ rule: "self.contains('abc')" }]), {
          ...(maxItems === undefined ? {} : { maxItems }),
        }),
      }),
    });

  // the table's cost-items-unbounded: the real server refused the same rule with factor 8.5x
  it("refuses a rule on the items of an unbounded list with the server's factor, naming the path", () => {
    expect(() => customResourceDefinition(kind(200))).toThrow(
      'spec.l[*]: x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 8.5x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)',
    );
  });

  it('accepts it once maxItems bounds the list', () => {
    expect(customResourceDefinition(kind(200, 1000)).spec.versions).toHaveLength(1);
  });
});
