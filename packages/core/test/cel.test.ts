/**
 * How kube-apiserver names a property in CEL and types a schema node (apiserver `pkg/cel` Escape and
 * `SchemaDeclType`). The escaped names are the ones the real 1.32 server accepted in CRD rules.
 */
import { describe, expect, it } from 'vitest';
import { CEL_RESERVED_WORDS, escapeCelName, schemaCelType } from '../src/cel.js';

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
