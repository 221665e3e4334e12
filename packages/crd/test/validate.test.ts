import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { applyDefaults, assertValid, defineKind, InvalidObjectError, prune, validate } from '../src/index.js';
import { WebApp } from './fixtures/webapp.js';

const ok = {
  apiVersion: 'apps.kubeloop.dev/v1',
  kind: 'WebApp',
  metadata: { name: 'web', namespace: 'default' },
  spec: { image: 'nginx', replicas: 2, port: 'http', tier: 'frontend' as const },
};

function messages(obj: unknown): string[] {
  return validate(WebApp, obj).map((e) => e.message);
}

describe('validate', () => {
  it('accepts a valid object', () => {
    expect(validate(WebApp, ok)).toEqual([]);
    expect(() => assertValid(WebApp, ok)).not.toThrow();
  });

  it('reports each OpenAPI violation with the server field path and message', () => {
    const bad = {
      ...ok,
      spec: {
        image: '',
        replicas: 51,
        port: true,
        tier: 'middle',
        hostnames: ['a', 'b', 'a', 'd', 'e', 'f'],
        env: [{ name: 'A' }, { name: 'A', value: 'x' }],
        labels: { a: 'x', b: 1 },
        owner: 'UPPER',
        ratio: 0,
        storage: { type: 's3' },
        template: { metadata: {} },
      },
    };
    expect(messages(bad)).toEqual(
      expect.arrayContaining([
        'spec.image: Invalid value: "": spec.image in body should be at least 1 chars long',
        'spec.replicas: Invalid value: 51: spec.replicas in body should be less than or equal to 50',
        'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
        'spec.tier: Unsupported value: "middle": supported values: "frontend", "backend"',
        'spec.hostnames: Too many: 6: must have at most 5 items',
        'spec.hostnames[2]: Duplicate value: "a"',
        // a list-map item by its keys, as Go's %#v of the map (envtest's golden reply: map[string]interface {}{"name":"http"})
        'spec.env[1]: Duplicate value: map[string]interface {}{"name":"A"}',
        'spec.labels.b: Invalid value: "integer": spec.labels.b in body must be of type string: "integer"',
        'spec.owner: Invalid value: "UPPER": spec.owner in body should match \'^[a-z]+$\'',
        'spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0',
        'spec.template.apiVersion: Required value: must not be empty',
        'spec.template.kind: Required value: must not be empty',
        'spec.storage: Invalid value: "": "spec.storage" must validate one and only one schema (oneOf). Found none valid',
      ]),
    );
    expect(messages({ ...ok, spec: {} })).toEqual(['spec.image: Required value']);
    expect(messages({ ...ok, spec: { ...ok.spec, hostnames: ['x'.repeat(64)] } })).toEqual([
      'spec.hostnames[0]: Too long: may not be longer than 63',
    ]);
    expect(messages({ ...ok, spec: { ...ok.spec, owner: null } })).toEqual([]);
  });

  it('checks metadata.name as the server does for custom resources', () => {
    expect(messages({ ...ok, metadata: {} })).toEqual([
      'metadata.name: Required value: name or generateName is required',
    ]);
    expect(messages({ ...ok, metadata: { generateName: 'web-' } })).toEqual([]);
    expect(messages({ ...ok, metadata: { name: 'Web' } })[0]).toMatch(
      /^metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain/,
    );
    expect(messages('x')).toHaveLength(1);
  });

  // the real 1.32 server's messages for the same schema and values (field.Error prints a bad value with Go's %v,
  // %q and %#v; a nil one as "null", as in the null-item golden reply of envtest)
  it('prints a bad value as the server does: Go numbers, quoted strings, "null"', () => {
    const Dial = defineKind({
      group: 'x.example.com',
      version: 'v1',
      kind: 'Dial',
      spec: Type.Object({
        f: Type.Optional(Type.Number({ minimum: 1 })),
        s: Type.Optional(Type.Union([Type.Literal('a'), Type.Literal('b')])),
        tags: Type.Optional(Type.Array(Type.String())),
      }),
    });
    const dial = (spec: Record<string, unknown>) =>
      validate(Dial, { apiVersion: 'x.example.com/v1', kind: 'Dial', metadata: { name: 'd' }, spec }).map(
        (e) => e.message,
      );
    expect(dial({ f: 0.00001 })).toEqual([
      'spec.f: Invalid value: 1e-05: spec.f in body should be greater than or equal to 1',
    ]);
    expect(dial({ s: 'a\u0001b' })).toEqual([
      'spec.s: Unsupported value: "a\\x01b": supported values: "a", "b"',
    ]);
    expect(dial({ tags: [null] })).toEqual([
      'spec.tags[0]: Invalid value: "null": spec.tags[0] in body must be of type string: "null"',
    ]);
  });

  it('throws InvalidObjectError with a message like the server 422', () => {
    const bad = { ...ok, spec: { ...ok.spec, replicas: -1 } };
    let err: unknown;
    try {
      assertValid(WebApp, bad);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidObjectError);
    expect((err as Error).message).toBe(
      'WebApp.apps.kubeloop.dev "web" is invalid: spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0',
    );
    expect(() => assertValid(WebApp, { ...bad, spec: { ...bad.spec, image: 1 } })).toThrow(
      /is invalid: \[spec\.image: .*, spec\.replicas: .*\]/,
    );
  });
});

describe('applyDefaults and prune', () => {
  it('applies defaults recursively without changing the input', () => {
    const input = { metadata: { name: 'x' }, spec: { image: 'i', replicas: null } };
    const out = applyDefaults(WebApp, input);
    expect(out.spec).toEqual({ image: 'i', replicas: 1, port: 8080, tier: 'frontend' });
    expect(input.spec.replicas).toBeNull();
  });

  it('prunes unknown fields and keeps preserved ones', () => {
    const { object, removed } = prune(WebApp, {
      apiVersion: 'apps.kubeloop.dev/v1',
      kind: 'WebApp',
      metadata: { name: 'x' },
      extra: 1,
      spec: {
        image: 'i',
        colour: 'red',
        config: { anything: { goes: true } },
        template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { x: 1 } },
        env: [{ name: 'a', junk: 1 }],
      },
    });
    expect(removed.sort()).toEqual(['extra', 'spec.colour', 'spec.env[0].junk']);
    expect(object.spec.config).toEqual({ anything: { goes: true } });
    expect(object.spec.template).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { x: 1 },
    });
  });
});
