/**
 * How kube-apiserver names a property in CEL and types a schema node (apiserver `pkg/cel` Escape and
 * `SchemaDeclType`). The escaped names are the ones the real 1.32 server accepted in CRD rules.
 */
import { describe, expect, it } from 'vitest';
import {
  CEL_RESERVED_WORDS,
  type CelAstNode,
  escapeCelName,
  rewriteHasMacros,
  schemaCelType,
  undeclaredFieldSelection,
  withReservedAliases,
} from '../src/cel.js';

describe('escapeCelName', () => {
  it('escapes -, ., / and __ left to right, and a reserved word whole', () => {
    expect(escapeCelName('replicas')).toBe('replicas');
    expect(escapeCelName('x-y')).toBe('x__dash__y');
    expect(escapeCelName('a.b/c')).toBe('a__dot__b__slash__c');
    expect(escapeCelName('x__z')).toBe('x__underscores__z');
    expect(escapeCelName('x___z')).toBe('x__underscores___z');
    expect(escapeCelName('-lead')).toBe('__dash__lead');
    expect(escapeCelName('namespace')).toBe('__namespace__');
    expect(escapeCelName('in')).toBe('__in__');
    expect(escapeCelName('namespaces')).toBe('namespaces');
    for (const w of CEL_RESERVED_WORDS) expect(escapeCelName(w)).toBe(`__${w}__`);
  });

  it('refuses a name that is empty, starts with a digit or holds another character', () => {
    expect(escapeCelName('')).toBeUndefined();
    expect(escapeCelName('1st')).toBeUndefined();
    expect(escapeCelName('a b')).toBeUndefined();
    expect(escapeCelName('a:b')).toBeUndefined();
    expect(escapeCelName('é')).toBeUndefined();
  });
});

describe('schemaCelType', () => {
  const str = { type: 'string' };

  it('types scalars, string formats and int-or-string', () => {
    expect(schemaCelType({ type: 'integer' })).toBe('int');
    expect(schemaCelType({ type: 'number' })).toBe('double');
    expect(schemaCelType({ type: 'boolean' })).toBe('bool');
    expect(schemaCelType(str)).toBe('string');
    expect(schemaCelType({ type: 'string', format: 'byte' })).toBe('bytes');
    expect(schemaCelType({ type: 'string', format: 'date' })).toBe('timestamp');
    expect(schemaCelType({ type: 'string', format: 'date-time' })).toBe('timestamp');
    expect(schemaCelType({ type: 'string', format: 'duration' })).toBe('duration');
    expect(schemaCelType({ type: 'string', format: 'email' })).toBe('string');
    expect(schemaCelType({ 'x-kubernetes-int-or-string': true })).toBe('dyn');
  });

  it('names object fields by their escaped names and leaves out what CEL cannot see', () => {
    expect(
      schemaCelType({
        type: 'object',
        properties: {
          'x-y': str,
          namespace: str,
          '1st': str,
          untyped: { 'x-kubernetes-preserve-unknown-fields': true },
          noItems: { type: 'array' },
          list: { type: 'array', items: { type: 'integer' } },
          labels: { type: 'object', additionalProperties: str },
          opaque: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        },
      }),
    ).toEqual({
      object: {
        x__dash__y: 'string',
        __namespace__: 'string',
        list: { list: 'int' },
        labels: { map: 'string' },
        opaque: { object: {} },
      },
    });
    expect(schemaCelType({ type: 'array', items: {} })).toBeUndefined();
    expect(schemaCelType({ type: 'object', additionalProperties: {} })).toBeUndefined();
    expect(schemaCelType(undefined)).toBeUndefined();
  });

  it('adds apiVersion, kind and metadata name/generateName at a resource root and an embedded resource', () => {
    const meta = { object: { name: 'string', generateName: 'string' } };
    expect(schemaCelType({ type: 'object', properties: { spec: { type: 'object' } } }, true)).toEqual({
      object: { spec: { object: {} }, kind: 'string', apiVersion: 'string', metadata: meta },
    });
    expect(
      schemaCelType({
        type: 'array',
        items: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: {} },
      }),
    ).toEqual({ list: { object: { kind: 'string', apiVersion: 'string', metadata: meta } } });
    // a schema that already declares them keeps its own metadata
    const full = {
      type: 'object',
      properties: {
        kind: str,
        apiVersion: str,
        metadata: { type: 'object', properties: { name: str, generateName: str, uid: str } },
      },
    };
    expect(schemaCelType(full, true)).toEqual({
      object: {
        kind: 'string',
        apiVersion: 'string',
        metadata: { object: { name: 'string', generateName: 'string', uid: 'string' } },
      },
    });
  });
});

/** A parse-tree node shaped as cel-js 8 builds it (op, args, offsets; `checkedType` after a check). */
function n(
  op: string,
  args: unknown,
  start: number,
  end: number,
  pos = start,
  checkedType?: CelAstNode['checkedType'],
) {
  return { op, args, start, end, pos, ...(checkedType ? { checkedType } : {}) } as CelAstNode;
}

describe('has() and field selections as kube-apiserver checks them', () => {
  // has(self.items[0].b)
  const src = 'has(self.items[0].b)';
  const self = n('id', 'self', 4, 8);
  const items = n('.', [self, 'items'], 4, 14, 9);
  const index = n('[]', [items, n('value', 0n, 15, 16)], 4, 17);
  const sel = n('.', [index, 'b'], 4, 19, 18);
  const call = n('call', ['has', [sel]], 0, 20);

  it('writes has(x.f) as (x).?f.hasValue() and maps each character back to the rule as written', () => {
    const r = rewriteHasMacros(src, call);
    expect(r?.source).toBe('(self.items[0]).?b.hasValue()');
    // the operand keeps its offsets; the field maps two past the macro's '(' (cel-go reports it there)
    expect(r?.position(1)).toBe(4);
    expect(r?.position(r.source.indexOf('b.has'))).toBe(5);
    expect(r?.position(1000)).toBe(src.length);
  });

  it('rewrites only what cel-js cannot evaluate when asked, and nothing without has()', () => {
    expect(rewriteHasMacros(src, call, true)?.source).toBe('(self.items[0]).?b.hasValue()');
    const plain = n('call', ['has', [n('.', [n('id', 'self', 4, 8), 'a'], 4, 10, 9)]], 0, 11);
    expect(rewriteHasMacros('has(self.a)', plain, true)).toBeUndefined();
    expect(rewriteHasMacros('has(self.a)', plain)?.source).toBe('(self).?a.hasValue()');
    expect(rewriteHasMacros('self', self)).toBeUndefined();
  });

  it('finds a selection of a field that the object type (or an optional of it) does not declare', () => {
    const fields = new Map([['Object0', new Set(['a'])]]);
    const obj = { name: 'Object0', kind: 'message' };
    const at = (operandType: CelAstNode['checkedType'], field: string, op = '.?') =>
      undeclaredFieldSelection(n(op, [n('id', 'self', 0, 4, 0, operandType), field], 0, 7, 6), (t) =>
        fields.get(t),
      );
    expect(at(obj, 'x')?.field).toBe('x');
    expect(at({ name: 'optional<Object0>', kind: 'optional', valueType: obj }, 'x', '.')?.field).toBe('x');
    expect(at(obj, 'a')).toBeUndefined();
    expect(at({ name: 'map<string, string>', kind: 'map' }, 'x')).toBeUndefined();
    expect(at(undefined, 'x')).toBeUndefined();
  });

  it('aliases a reserved-word field under the word itself', () => {
    expect(withReservedAliases({ __namespace__: 1, __dash__x: 2, a: 3 })).toEqual({
      __namespace__: 1,
      namespace: 1,
      __dash__x: 2,
      a: 3,
    });
  });
});
