import { type ApiClient, type Kind, newClient, type ObjectOf } from '@kubeloop/client';
import { Type } from 'typebox';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  CelCompileError,
  customResourceDefinition,
  defineKind,
  EmbeddedResource,
  IntOrString,
  ListMap,
  ListSet,
  PreserveUnknownFields,
  SchemaError,
  toStructural,
  WithRules,
} from '../src/index.js';
import { WebApp, WebAppV1alpha1 } from './fixtures/webapp.js';

describe('defineKind', () => {
  it('gives a kind descriptor usable as a Kind<T> with the object type, without casts', () => {
    type WebAppObject = ObjectOf<typeof WebApp>;
    expectTypeOf(WebApp).toExtend<Kind<WebAppObject>>();
    expectTypeOf<WebAppObject['spec']['replicas']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<WebAppObject['spec']['port']>().toEqualTypeOf<number | string | undefined>();
    expectTypeOf<WebAppObject['spec']['tier']>().toEqualTypeOf<'frontend' | 'backend' | undefined>();
    expectTypeOf<NonNullable<WebAppObject['status']>['phase']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<WebAppObject['spec']['owner']>().toEqualTypeOf<string | null | undefined>();
    // the client's methods take it as they take Pod
    const typed = async (c: ApiClient) => {
      const got = await c.get(WebApp, { namespace: 'ns', name: 'x' });
      expectTypeOf(got.spec.image).toEqualTypeOf<string>();
    };
    expect(typed).toBeTypeOf('function');
    expect(newClient).toBeTypeOf('function');
    expect(WebApp.apiVersion).toBe('apps.kubeloop.dev/v1');
    expect(WebApp.kind).toBe('WebApp');
    expect(Object.isFrozen(WebApp)).toBe(true);
  });

  it('generates a CRD with versions, subresources, printer columns, names and CEL rules', () => {
    const crd = customResourceDefinition(WebAppV1alpha1, WebApp);
    expect(crd.metadata.name).toBe('webapps.apps.kubeloop.dev');
    expect(crd.spec.names).toEqual({
      kind: 'WebApp',
      listKind: 'WebAppList',
      plural: 'webapps',
      singular: 'webapp',
      shortNames: ['wa'],
      categories: ['all'],
    });
    const [alpha, v1] = crd.spec.versions;
    expect(alpha).toMatchObject({ name: 'v1alpha1', served: true, storage: false, deprecated: true });
    expect(alpha?.deprecationWarning).toContain('deprecated');
    expect(v1?.subresources).toEqual({
      status: {},
      scale: {
        specReplicasPath: '.spec.replicas',
        statusReplicasPath: '.status.replicas',
        labelSelectorPath: '.status.selector',
      },
    });
    expect(v1?.additionalPrinterColumns?.map((c) => c.name)).toEqual(['Replicas', 'Phase', 'Age']);
    const spec = v1?.schema.openAPIV3Schema.properties?.spec;
    expect(v1?.schema.openAPIV3Schema.required).toEqual(['spec']);
    expect(spec?.properties?.port).toEqual({ default: 8080, 'x-kubernetes-int-or-string': true });
    expect(spec?.properties?.tier).toEqual({
      type: 'string',
      enum: ['frontend', 'backend'],
      default: 'frontend',
    });
    expect(spec?.properties?.labels).toEqual({
      type: 'object',
      maxProperties: 10,
      additionalProperties: { type: 'string' },
    });
    expect(spec?.properties?.owner).toEqual({ type: 'string', pattern: '^[a-z]+$', nullable: true });
    expect(spec?.properties?.config).toEqual({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    });
    expect(spec?.properties?.template).toMatchObject({
      type: 'object',
      'x-kubernetes-embedded-resource': true,
    });
    expect(spec?.properties?.env).toMatchObject({
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
    });
    expect(spec?.properties?.hostnames).toMatchObject({ 'x-kubernetes-list-type': 'set', maxItems: 5 });
    expect(spec?.properties?.ratio).toEqual({
      type: 'number',
      minimum: 0,
      exclusiveMinimum: true,
      maximum: 1,
    });
    // the tagged union in the structural form
    expect(spec?.properties?.storage).toEqual({
      type: 'object',
      properties: {
        type: { type: 'string', enum: ['s3', 'pvc'] },
        bucket: { type: 'string' },
        claimName: { type: 'string' },
        size: { type: 'string' },
      },
      required: ['type'],
      oneOf: [
        { properties: { type: { enum: ['s3'] } }, required: ['type', 'bucket'] },
        { properties: { type: { enum: ['pvc'] } }, required: ['type', 'claimName'] },
      ],
    });
    expect(spec?.['x-kubernetes-validations']).toHaveLength(2);
    expect(v1?.schema.openAPIV3Schema['x-kubernetes-validations']?.[0]?.messageExpression).toContain(
      'reserved',
    );
  });

  it('refuses a schema kube cannot express, naming the property path', () => {
    const make = (spec: ReturnType<typeof Type.Object>) => () =>
      defineKind({ group: 'x.example.com', version: 'v1', kind: 'Bad', spec });
    const cases: [ReturnType<typeof Type.Object>, string, RegExp][] = [
      [
        Type.Object({ a: Type.Union([Type.String(), Type.Boolean()]) }),
        'spec.a',
        /union of string \| boolean/,
      ],
      [Type.Object({ t: Type.Tuple([Type.String(), Type.Integer()]) }), 'spec.t', /tuples/],
      [Type.Object({ l: Type.Array(Type.String(), { uniqueItems: true }) }), 'spec.l', /uniqueItems/],
      [
        Type.Object({ m: Type.Record(Type.String({ pattern: '^a' }), Type.String()) }),
        'spec.m',
        /patternProperties/,
      ],
      [Type.Object({ n: Type.Object({ deep: Type.Null() }) }), 'spec.n.deep', /null alone/],
      [
        Type.Object({ d: Type.Array(Type.Object({ x: Type.BigInt() })) }),
        'spec.d[*].x',
        /cannot be expressed/,
      ],
      [
        Type.Object({
          u: Type.Union([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })]),
        }),
        'spec.u',
        /discriminator/,
      ],
      [
        Type.Object({ p: ListMap(Type.Object({ name: Type.Optional(Type.String()) }), ['name']) }),
        'spec.p[*].name',
        /required or have a default/,
      ],
      [Type.Object({ s: ListSet(Type.Object({ a: Type.String() })) }), 'spec.s', /scalar items/],
      [Type.Object({ e: Type.Enum(['a', 1]) }), 'spec.e', /mixes/],
    ];
    for (const [spec, path, why] of cases) {
      let err: unknown;
      try {
        make(spec)();
      } catch (e) {
        err = e;
      }
      expect(err, path).toBeInstanceOf(SchemaError);
      expect((err as SchemaError).path).toBe(path);
      expect((err as SchemaError).message).toMatch(why);
    }
  });

  it('refuses a CEL rule that does not compile, with the rule, the path and the evaluator message', () => {
    const bad = (rule: string) =>
      defineKind({
        group: 'x.example.com',
        version: 'v1',
        kind: 'Cel',
        spec: Type.Object({ inner: Type.Object({ n: WithRules(Type.Integer(), [{ rule }]) }) }),
      });
    const cases: [string, RegExp][] = [
      ['self >', /Unexpected token/],
      ['self > "a"', /no such overload/],
      ['self.size()', /overload/],
      ['self + 1', /must evaluate to a bool/],
    ];
    for (const [rule, why] of cases) {
      let err: unknown;
      try {
        customResourceDefinition(bad(rule));
      } catch (e) {
        err = e;
      }
      expect(err, rule).toBeInstanceOf(CelCompileError);
      const e = err as CelCompileError;
      expect(e.rule).toBe(rule);
      expect(e.path).toBe('spec.inner.n');
      expect(e.detail).toMatch(why);
    }
    // unknown field on an object
    const k = defineKind({
      group: 'x.example.com',
      version: 'v1',
      kind: 'Cel',
      spec: WithRules(Type.Object({ a: Type.String() }), [{ rule: 'self.b == "x"' }]),
    });
    expect(() => customResourceDefinition(k)).toThrow(/undefined field 'b'/);
    // oldSelf under a list that is not a map
    const t = defineKind({
      group: 'x.example.com',
      version: 'v1',
      kind: 'Cel',
      spec: Type.Object({ l: Type.Array(WithRules(Type.String(), [{ rule: 'self == oldSelf' }])) }),
    });
    expect(() => customResourceDefinition(t)).toThrow(/spec\.l\[\*\]: .*uncorrelatable/);
  });

  // what the real 1.32 server answered for the same rules: the escaped names and an embedded resource's
  // apiVersion/kind compiled; `self.foo` on a preserve-unknown-fields object did not ("undefined field 'foo'")
  it('types a rule as the server does: escaped property names, embedded resources, no unknown fields', () => {
    const kind = (spec: ReturnType<typeof Type.Object>) =>
      defineKind({ group: 'x.example.com', version: 'v1', kind: 'Esc', spec });
    const ok = kind(
      WithRules(
        Type.Object({
          'x-y': Type.String(),
          '-lead': Type.String(),
          namespace: Type.String(),
          'a.b/c': Type.Integer(),
          x__z: Type.String(),
          template: EmbeddedResource(),
        }),
        [
          { rule: "self.x__dash__y.startsWith('ok') && self.__dash__lead != 'x'" },
          { rule: "self.__namespace__ != 'bad' && self.a__dot__b__slash__c > 0" },
          { rule: 'self.x__underscores__z.size() < 3' },
          { rule: "self.template.kind == 'Pod' && self.template.apiVersion == 'v1'" },
          { rule: "self.template.metadata.name != ''" },
        ],
      ),
    );
    expect(customResourceDefinition(ok).spec.versions).toHaveLength(1);
    const refused = (rule: string, spec: ReturnType<typeof Type.Object>) => {
      try {
        customResourceDefinition(kind(WithRules(spec, [{ rule }])));
      } catch (e) {
        return e instanceof CelCompileError ? e.detail : e;
      }
      return 'compiled';
    };
    expect(refused("self.x_y == 'a'", Type.Object({ 'x-y': Type.String() }))).toMatch(/x_y/);
    expect(refused("self.blob.foo == 'x'", Type.Object({ blob: PreserveUnknownFields() }))).toMatch(/foo/);
  });

  it('accepts the Kubernetes CEL libraries and optional syntax', () => {
    const k = defineKind({
      group: 'x.example.com',
      version: 'v1',
      kind: 'Libs',
      spec: WithRules(
        Type.Object({
          q: Type.String(),
          u: Type.String(),
          ip: Type.String(),
          // bounded: kube-apiserver 1.32 refuses matches() over an unbounded list of unbounded strings for its
          // estimated cost (more than 100x the budget), and so does customResourceDefinition
          tags: Type.Array(Type.String({ maxLength: 63 }), { maxItems: 16 }),
          o: Type.Optional(Type.Object({ x: Type.Integer() })),
        }),
        [
          { rule: "quantity(self.q).isLessThan(quantity('1Gi'))" },
          { rule: "isURL(self.u) && url(self.u).getScheme() == 'https'" },
          { rule: "isIP(self.ip) && ip(self.ip).family() == 4 && cidr('10.0.0.0/8').containsIP(self.ip)" },
          { rule: 'self.tags.isSorted() && self.tags.all(t, t.matches("^[a-z]+$"))' },
          { rule: 'self.?o.x.orValue(0) >= 0' },
          { rule: "self.q.find('[0-9]+') != ''" },
          { rule: "sets.contains(self.tags, ['a'])" },
        ],
      ),
    });
    expect(customResourceDefinition(k).spec.versions).toHaveLength(1);
  });

  it('checks names, storage versions and scale paths', () => {
    expect(() => defineKind({ group: 'nodot', version: 'v1', kind: 'A', spec: Type.Object({}) })).toThrow(
      /group/,
    );
    expect(() => defineKind({ group: 'a.b', version: 'V1', kind: 'A', spec: Type.Object({}) })).toThrow(
      /version/,
    );
    expect(() => defineKind({ group: 'a.b', version: 'v1', kind: 'a', spec: Type.Object({}) })).toThrow(
      /kind/,
    );
    expect(() =>
      defineKind({
        group: 'a.b',
        version: 'v1',
        kind: 'A',
        spec: Type.Object({ n: Type.String() }),
        status: Type.Object({ r: Type.Integer() }),
        subresources: { scale: { specReplicasPath: '.spec.n', statusReplicasPath: '.status.r' } },
      }),
    ).toThrow(/specReplicasPath: .spec.n must be of type integer/);
    const a = defineKind({ group: 'a.b', version: 'v1', kind: 'A', spec: Type.Object({}) });
    const b = defineKind({ group: 'a.b', version: 'v2', kind: 'A', spec: Type.Object({}) });
    expect(() => customResourceDefinition(a, b)).toThrow(/exactly one version marked as storage/);
    const c = defineKind({ group: 'a.b', version: 'v2', kind: 'B', spec: Type.Object({}), storage: false });
    expect(() => customResourceDefinition(a, c)).toThrow(/kind "B" differs/);
  });

  it('maps integer | string, nullable and intersections', () => {
    expect(toStructural(Type.Union([Type.Integer(), Type.String()]), 'x')).toEqual({
      'x-kubernetes-int-or-string': true,
    });
    expect(toStructural(Nullish(), 'x')).toEqual({ type: 'integer', nullable: true });
    expect(
      toStructural(
        Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.Integer() })]),
        'x',
      ),
    ).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'integer' } },
      required: ['a', 'b'],
    });
    expect(toStructural(IntOrString(), 'x')).toEqual({ 'x-kubernetes-int-or-string': true });
    expect(toStructural(Type.Unknown(), 'x')).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
  });
});

function Nullish() {
  return Type.Union([Type.Integer(), Type.Null()]);
}
