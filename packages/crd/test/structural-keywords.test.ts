/**
 * Every keyword a user can give a TypeBox builder (or one of ours) either reaches the generated CRD schema at that
 * node or is refused with a SchemaError naming the node's path: none is dropped silently. The matrix is builder ×
 * keyword; a keyword with a different OpenAPI v3.0 spelling (`exclusiveMinimum: n` → `minimum: n,
 * exclusiveMinimum: true`) counts as carried in that spelling.
 */
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import {
  EmbeddedResource,
  IntOrString,
  PreserveUnknownFields,
  SchemaError,
  toStructural,
} from '../src/index.js';
import type { JSONSchemaProps } from '../src/types.js';

type Options = Record<string, unknown>;

const BUILDERS: Record<string, (o: Options) => unknown> = {
  'Type.Object': (o) => Type.Object({ a: Type.String() }, o),
  'Type.Array': (o) => Type.Array(Type.String(), o),
  'Type.String': (o) => Type.String(o),
  'Type.Integer': (o) => Type.Integer(o),
  'Type.Number': (o) => Type.Number(o),
  'Type.Boolean': (o) => Type.Boolean(o),
  'Type.Record': (o) => Type.Record(Type.String(), Type.String(), o),
  'Type.Literal': (o) => Type.Literal('a', o),
  'literal union': (o) => Type.Union([Type.Literal('a'), Type.Literal('b')], o),
  'nullable union': (o) => Type.Union([Type.String(), Type.Null()], o),
  'nullable type array': (o) => ({ type: ['string', 'null'], ...o }),
  'Type.Intersect': (o) =>
    Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })], o),
  'tagged union': (o) =>
    Type.Union(
      [
        Type.Object({ t: Type.Literal('a'), x: Type.String() }),
        Type.Object({ t: Type.Literal('b'), y: Type.String() }),
      ],
      o,
    ),
  IntOrString: (o) => ({ ...(IntOrString() as object), ...o }),
  PreserveUnknownFields: (o) => ({ ...(PreserveUnknownFields() as object), ...o }),
  EmbeddedResource: (o) => ({ ...(EmbeddedResource() as object), ...o }),
};

const KEYWORDS: Options = {
  description: 'd',
  title: 't',
  default: 'x',
  example: 'x',
  format: 'date-time',
  maximum: 5,
  minimum: 1,
  multipleOf: 2,
  maxLength: 5,
  minLength: 1,
  pattern: '^a',
  maxItems: 5,
  minItems: 1,
  maxProperties: 5,
  minProperties: 1,
  nullable: true,
  enum: ['a'],
  exclusiveMinimum: 1,
  exclusiveMaximum: 9,
  required: ['a'],
  items: { type: 'string' },
  additionalProperties: { type: 'string' },
  properties: { z: { type: 'string' } },
  'x-kubernetes-validations': [{ rule: 'true' }],
  'x-kubernetes-map-type': 'atomic',
  'x-kubernetes-list-type': 'atomic',
};

/** Whether `out` carries `keyword: value` (in its OpenAPI v3.0 spelling). */
function carried(out: JSONSchemaProps, keyword: string, value: unknown): boolean {
  const o = out as Record<string, unknown>;
  if (keyword === 'exclusiveMinimum') return o.minimum === value && o.exclusiveMinimum === true;
  if (keyword === 'exclusiveMaximum') return o.maximum === value && o.exclusiveMaximum === true;
  if (keyword === 'properties' || keyword === 'required') {
    const want = value as Record<string, unknown> | string[];
    const got = o[keyword] as Record<string, unknown> | string[] | undefined;
    if (!got) return false;
    return Array.isArray(want)
      ? want.every((w) => (got as string[]).includes(w))
      : Object.entries(want).every(
          ([k, v]) => JSON.stringify((got as Record<string, unknown>)[k]) === JSON.stringify(v),
        );
  }
  return JSON.stringify(o[keyword]) === JSON.stringify(value);
}

describe('toStructural carries or refuses every keyword given to a builder', () => {
  for (const [builder, make] of Object.entries(BUILDERS)) {
    for (const [keyword, value] of Object.entries(KEYWORDS)) {
      it(`${builder} with ${keyword}`, () => {
        let out: JSONSchemaProps | undefined;
        let err: unknown;
        try {
          out = toStructural(make({ [keyword]: value }), 'spec.x');
        } catch (e) {
          err = e;
        }
        if (err !== undefined) {
          expect(err).toBeInstanceOf(SchemaError);
          expect((err as SchemaError).path).toMatch(/^spec\.x/);
          return;
        }
        expect(carried(out as JSONSchemaProps, keyword, value), JSON.stringify(out)).toBe(true);
      });
    }
  }

  it('names the node and the keyword when it refuses', () => {
    expect(() => toStructural(Type.String({ items: { type: 'string' } }), 'spec.name')).toThrow(
      'spec.name: items given to a node of type "string": only type: array has items',
    );
    expect(() => toStructural(Type.Array(Type.String(), { required: ['a'] }), 'spec.l')).toThrow(
      'spec.l: required given to a node of type "array": only type: object has properties',
    );
    expect(() =>
      toStructural(Type.Union([Type.Literal('a'), Type.Literal('b')], { enum: ['a'] }), 'spec.t'),
    ).toThrow('spec.t: enum given to a union of literals');
  });

  it('carries an enum given to an object, an array and a nullable node', () => {
    expect(toStructural(Type.Object({ a: Type.String() }, { enum: [{ a: 'x' }] }), 's').enum).toEqual([
      { a: 'x' },
    ]);
    expect(toStructural(Type.Array(Type.String(), { enum: [['a']] }), 's').enum).toEqual([['a']]);
    expect(toStructural(Type.Union([Type.String(), Type.Null()], { enum: ['a', null] }), 's')).toEqual({
      type: 'string',
      nullable: true,
      enum: ['a', null],
    });
  });
});
