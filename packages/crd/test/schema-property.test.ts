// Property: for random small schemas built from the TypeBox builders defineKind supports, the generated CRD is
// accepted by envtest (so it is structural), and validate() gives every random object the verdict the server's
// create gives it (accepted vs 422), with the same field paths for the refused ones.
import { isInvalid, newClient, type StatusError } from '@kubeloop/client';
import { Environment } from '@kubeloop/envtest';
import fc from 'fast-check';
import { type TSchema, Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import {
  type CustomResourceKind,
  customResourceDefinition,
  defineKind,
  IntOrString,
  ListSet,
  validate,
} from '../src/index.js';

/** A schema node, kept as data so the same description yields the TypeBox schema and the value generator. */
type Node =
  | { k: 'string'; minLength?: number; maxLength?: number; pattern?: string }
  | { k: 'enum'; values: string[] }
  | { k: 'integer'; minimum?: number; maximum?: number }
  | { k: 'number'; minimum?: number; maximum?: number }
  | { k: 'boolean' }
  | { k: 'intOrString' }
  | { k: 'array'; item: Node; minItems?: number; maxItems?: number }
  | { k: 'set'; item: 'string' | 'integer'; maxItems?: number }
  | { k: 'object'; props: { name: string; node: Node; required: boolean }[] };

const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
// patterns whose meaning is the same in RE2 (the server) and ECMAScript (ajv)
const PATTERNS = ['^[a-z]+$', '^[0-9]*$', 'b', '^a.c$'];

const leaf: fc.Arbitrary<Node> = fc.oneof(
  fc.record({
    k: fc.constant('string' as const),
    minLength: opt(fc.integer({ min: 0, max: 2 })),
    maxLength: opt(fc.integer({ min: 2, max: 4 })),
    pattern: opt(fc.constantFrom(...PATTERNS)),
  }),
  fc.record({
    k: fc.constant('enum' as const),
    values: fc.uniqueArray(fc.constantFrom('a', 'b', 'c1', 'Dd'), { minLength: 1, maxLength: 3 }),
  }),
  fc.record({
    k: fc.constant('integer' as const),
    minimum: opt(fc.integer({ min: -2, max: 2 })),
    maximum: opt(fc.integer({ min: 3, max: 6 })),
  }),
  fc.record({
    k: fc.constant('number' as const),
    minimum: opt(fc.integer({ min: -2, max: 2 })),
    maximum: opt(fc.integer({ min: 3, max: 6 })),
  }),
  fc.constant({ k: 'boolean' as const }),
  fc.constant({ k: 'intOrString' as const }),
  fc.record({
    k: fc.constant('set' as const),
    item: fc.constantFrom('string' as const, 'integer' as const),
    maxItems: opt(fc.integer({ min: 1, max: 3 })),
  }),
);

const node: fc.Arbitrary<Node> = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({
      k: fc.constant('array' as const),
      item: tie('node'),
      minItems: opt(fc.integer({ min: 0, max: 1 })),
      maxItems: opt(fc.integer({ min: 1, max: 3 })),
    }),
    objectNode(tie('node')),
  ),
})).node;

function objectNode(child: fc.Arbitrary<Node>): fc.Arbitrary<Node> {
  return fc
    .uniqueArray(
      fc.record({ name: fc.constantFrom('a', 'b', 'c', 'd'), node: child, required: fc.boolean() }),
      {
        minLength: 1,
        maxLength: 3,
        selector: (p) => p.name,
      },
    )
    .map((props) => ({ k: 'object' as const, props }));
}

const specNode = objectNode(node);

function toSchema(n: Node): TSchema {
  switch (n.k) {
    case 'string':
      return Type.String({ minLength: n.minLength, maxLength: n.maxLength, pattern: n.pattern });
    case 'enum':
      return Type.Union(n.values.map((v) => Type.Literal(v)));
    case 'integer':
      return Type.Integer({ minimum: n.minimum, maximum: n.maximum });
    case 'number':
      return Type.Number({ minimum: n.minimum, maximum: n.maximum });
    case 'boolean':
      return Type.Boolean();
    case 'intOrString':
      return IntOrString();
    case 'array':
      return Type.Array(toSchema(n.item), { minItems: n.minItems, maxItems: n.maxItems });
    case 'set':
      return ListSet(n.item === 'string' ? Type.String() : Type.Integer(), { maxItems: n.maxItems });
    case 'object':
      return Type.Object(
        Object.fromEntries(
          n.props.map((p) => [p.name, p.required ? toSchema(p.node) : Type.Optional(toSchema(p.node))]),
        ),
      );
  }
}

/** Values the schema accepts (when its bounds can be met at all). */
function valid(n: Node): fc.Arbitrary<unknown> {
  switch (n.k) {
    case 'string': {
      if (n.pattern === '^a.c$') return fc.constant('abc');
      const min = Math.max(n.minLength ?? 0, n.pattern === '^[a-z]+$' || n.pattern === 'b' ? 1 : 0);
      const max = Math.max(min, n.maxLength ?? 3);
      const unit = n.pattern === '^[0-9]*$' ? '1' : 'b';
      return fc.integer({ min, max }).map((len) => unit.repeat(len));
    }
    case 'enum':
      return fc.constantFrom(...n.values);
    case 'integer':
    case 'number':
      return fc.integer({ min: n.minimum ?? -3, max: n.maximum ?? 6 });
    case 'boolean':
      return fc.boolean();
    case 'intOrString':
      return fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom('80', 'http'));
    case 'array':
      return fc.array(valid(n.item), { minLength: n.minItems ?? 0, maxLength: n.maxItems ?? 3 });
    case 'set':
      return fc.uniqueArray(
        n.item === 'string' ? fc.constantFrom<unknown>('a', 'b', 'c') : fc.constantFrom<unknown>(0, 1, 2),
        {
          maxLength: n.maxItems ?? 3,
        },
      );
    case 'object':
      return fc.record(Object.fromEntries(n.props.map((p) => [p.name, value(p.node)])), {
        requiredKeys: n.props.filter((p) => p.required).map((p) => p.name),
      });
  }
}

// values near the schema: mostly of the right type, often outside a bound, sometimes of the wrong type
const wrongType = fc.constantFrom<unknown>('x', 7, true, 1.5, [], {});

function value(n: Node): fc.Arbitrary<unknown> {
  const right = ((): fc.Arbitrary<unknown> => {
    switch (n.k) {
      case 'string':
        return fc.string({ unit: fc.constantFrom('a', 'b', 'c', '1', 'Z'), maxLength: 5 });
      case 'enum':
        return fc.constantFrom(...n.values, 'zz');
      case 'integer':
        return fc.integer({ min: -4, max: 8 });
      case 'number':
        return fc.oneof(fc.integer({ min: -4, max: 8 }), fc.constantFrom(-2.5, 0.5, 6.5));
      case 'boolean':
        return fc.boolean();
      case 'intOrString':
        return fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom('80', 'http'));
      case 'array':
        return fc.array(value(n.item), { maxLength: 4 });
      case 'set':
        // Values may repeat three or more times: each repeated value is reported once, at its second
        // occurrence, by both (apiextensions listtype validation, validateListSet).
        return n.item === 'string'
          ? fc.array(fc.constantFrom<unknown>('a', 'b', 'c'), { maxLength: 4 })
          : fc.array(fc.constantFrom<unknown>(0, 1, 2), { maxLength: 4 });
      case 'object':
        return fc.record(Object.fromEntries(n.props.map((p) => [p.name, value(p.node)])), {
          requiredKeys: [],
        });
    }
  })();
  return fc.oneof(
    { weight: 12, arbitrary: valid(n) },
    { weight: 3, arbitrary: right },
    { weight: 1, arbitrary: wrongType },
  );
}

/** The server's verdict on a create: [] when accepted, else the cause fields of the 422. */
async function serverVerdict(client: ReturnType<typeof newClient>, kind: CustomResourceKind, obj: unknown) {
  try {
    await client.create(kind, obj as never);
    return [];
  } catch (e) {
    const err = e as StatusError;
    if (!isInvalid(err)) throw e;
    return [...new Set((err.status?.details?.causes ?? []).map((c) => c.field ?? ''))].sort();
  }
}

let run = 0;

describe('random schemas: generated CRD on envtest vs validate()', () => {
  it('envtest accepts every generated CRD and gives each object the verdict validate() gives', async () => {
    await fc.assert(
      fc.asyncProperty(
        specNode.chain((spec) =>
          fc.tuple(fc.constant(spec), fc.array(value(spec), { minLength: 6, maxLength: 8 })),
        ),
        async ([spec, specs]) => {
          run++;
          const kind = defineKind({
            group: 'prop.example.com',
            version: 'v1',
            kind: `Prop${run}`,
            scope: 'Cluster',
            spec: toSchema(spec),
          });
          // embedded mode whatever the environment says: each run installs a fresh CRD
          const env = new Environment({ crds: [customResourceDefinition(kind)], env: {} });
          await env.start(); // (1) throws when the server refuses the CRD
          const client = newClient(env.config);
          try {
            for (const [i, s] of specs.entries()) {
              const obj = { metadata: { name: `o${i}` }, spec: s };
              const local = [...new Set(validate(kind, obj).map((e) => e.field))].sort();
              const server = await serverVerdict(client, kind, obj);
              // (2) the same verdict and, when refused, the same fields
              expect({ spec: s, fields: local }).toEqual({ spec: s, fields: server });
            }
          } finally {
            await client.close();
            await env.stop();
          }
        },
      ),
      { numRuns: 25, seed: 20261201 },
    );
  }, 120_000);
});
