/**
 * CEL rule semantics beyond the golden cases, run in-process on the rule tree (compileRules + validateRules):
 * optional types, optionalOldSelf, transition rules skipped on create, a root rule's `<nil>` field, runtime
 * errors, messageExpression falling back to the rule's message, and the Kubernetes libraries (lists, regex,
 * quantity, IP/CIDR, URL, format, sets).
 */
import { describe, expect, it } from 'vitest';
import { compileRules, validateRules } from '../../src/cel/rules.js';

type Json = Record<string, unknown>;

function check(spec: Json, rules: Json[], obj: Json, old?: Json): string[] {
  const schema = {
    type: 'object',
    properties: { spec: { type: 'object', properties: spec, 'x-kubernetes-validations': rules } },
  };
  const { tree, errors } = compileRules(schema);
  expect(errors).toEqual([]);
  if (!tree) return [];
  return validateRules(tree, { spec: obj }, old ? { spec: old } : undefined).map(
    (e) => `${e.field}: ${e.detail}`,
  );
}

const str = { type: 'string' };
const int = { type: 'integer' };

describe('CEL x-kubernetes-validations', () => {
  it('evaluates optional field access', () => {
    expect(check({ a: str }, [{ rule: "self.?a.orValue('x') == 'x'" }], {})).toEqual([]);
    expect(check({ a: str }, [{ rule: "self.?a.orValue('x') == 'x'" }], { a: 'y' })).toEqual([
      `spec: Invalid value: "object": failed rule: self.?a.orValue('x') == 'x'`,
    ]);
  });

  it('skips transition rules on create and runs them on update; optionalOldSelf runs on create too', () => {
    const rule = { rule: 'self.n >= oldSelf.n', message: 'n may only grow' };
    expect(check({ n: int }, [rule], { n: 1 })).toEqual([]);
    expect(check({ n: int }, [rule], { n: 1 }, { n: 2 })).toEqual([
      'spec: Invalid value: "object": n may only grow',
    ]);
    const opt = {
      rule: '!oldSelf.hasValue() || self.n >= oldSelf.value().n',
      optionalOldSelf: true,
      message: 'grow',
    };
    expect(check({ n: int }, [opt], { n: 1 })).toEqual([]);
    expect(check({ n: int }, [opt], { n: 1 }, { n: 2 })).toEqual(['spec: Invalid value: "object": grow']);
  });

  it('reports a runtime error as "<error> evaluating rule"', () => {
    expect(check({ a: str }, [{ rule: "self.a == 'x'" }], {})).toEqual([
      `spec: Invalid value: "object": no such key: a evaluating rule: self.a == 'x'`,
    ]);
  });

  it('falls back to message when messageExpression fails or is empty', () => {
    expect(check({ a: str }, [{ rule: 'false', message: 'm', messageExpression: 'self.a' }], {})).toEqual([
      'spec: Invalid value: "object": m',
    ]);
    expect(check({ a: str }, [{ rule: 'false', messageExpression: "' '" }], {})).toEqual([
      'spec: Invalid value: "object": failed rule: false',
    ]);
  });

  it('names a root rule <nil> and honours reason Required and Duplicate', () => {
    const { tree } = compileRules({
      type: 'object',
      properties: { spec: { type: 'object', properties: { a: str } } },
      'x-kubernetes-validations': [
        { rule: 'self.metadata.name.startsWith("x")', reason: 'FieldValueRequired', message: 'name' },
        { rule: 'false', reason: 'FieldValueDuplicate' },
      ],
    });
    const errs = validateRules(tree as never, { metadata: { name: 'y' }, spec: {} });
    expect(errs.map((e) => `${e.field}: ${e.detail}`)).toEqual([
      '<nil>: Required value: name',
      '<nil>: Duplicate value: "object"',
    ]);
  });

  it('offers the Kubernetes libraries', () => {
    const t = (rule: string, obj: Json = {}) =>
      check({ l: { type: 'array', items: int }, s: str }, [{ rule }], obj);
    for (const rule of [
      '[1, 2, 3].isSorted() && [1, 2].sum() == 3 && [3, 1].min() == 1 && [3, 1].max() == 3',
      // (on a literal list of strings the server refuses indexOf for its estimated cost: cost-literal-index-of)
      '[1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2',
      "'abc123def'.find('[0-9]+') == '123' && 'a1b2'.findAll('[0-9]') == ['1', '2']",
      "quantity('1Gi').isGreaterThan(quantity('1G')) && quantity('500m').asApproximateFloat() == 0.5",
      "isQuantity('2Gi') && !isQuantity('2 Gi') && quantity('2').asInteger() == 2",
      "ip('10.0.0.1').family() == 4 && ip('::1').isLoopback() && !isIP('10.0.0.01')",
      "cidr('10.0.0.0/8').containsIP('10.1.2.3') && cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8') && cidr('::/0').prefixLength() == 0",
      "url('https://example.com:8443/a?b=c').getHostname() == 'example.com' && url('https://example.com:8443/a').getPort() == '8443'",
      "isURL('https://x') && !isURL('not a url')",
      "!format.dns1123Label().validate('abc').hasValue() && format.dns1123Label().validate('A_B').hasValue()",
      "format.named('dns1035Label').hasValue() && !format.named('nope').hasValue()",
      'sets.contains([1, 2, 3], [1, 2]) && sets.equivalent([1, 2], [2, 1]) && sets.intersects([1], [1, 4])',
      // strings extension v2 as cel-go (Go's strings.Replace): charAt, replace with and without a count
      "'héllo'.charAt(1) == 'é' && 'abc'.charAt(3) == '' && 'aaa'.replace('a', 'b') == 'bbb' && 'aaa'.replace('a', 'b', 2) == 'bba' && 'ab'.replace('', '-') == '-a-b-' && 'ab'.replace('a', 'x', 0) == 'ab'",
    ])
      expect(t(rule), rule).toEqual([]);
  });

  // Accepted by the real 1.32 server (test/golden/crd-rules/table.json: has-index-declared, has-map-value-declared,
  // select-unescaped-reserved); cel-js's own has() takes only a chain of selections on a variable, and a
  // reserved word is found under the word itself as the server finds it
  it('evaluates has() below an index and a reserved-word property by its own name', () => {
    const items = { type: 'array', items: { type: 'object', properties: { b: int } } };
    const m = { type: 'object', additionalProperties: { type: 'object', properties: { a: str } } };
    const rules = [
      { rule: 'self.items.size() == 0 || has(self.items[0].b)', message: 'first item needs b' },
      { rule: "!('k' in self.m) || has(self.m['k'].a)", message: 'k needs a' },
      { rule: "!has(self.namespace) || self.namespace != 'bad'", message: 'namespace' },
    ];
    const spec = { items, m, namespace: str };
    expect(check(spec, rules, { items: [{ b: 1 }], m: { k: { a: 'x' } }, namespace: 'ok' })).toEqual([]);
    expect(check(spec, rules, { items: [{}], m: { k: {} }, namespace: 'bad' })).toEqual([
      'spec: Invalid value: "object": first item needs b',
      'spec: Invalid value: "object": k needs a',
      'spec: Invalid value: "object": namespace',
    ]);
  });

  // The same CRD on the real 1.32 server: the rules compiled, `{"x-y":"okay"}` was created, and the last object
  // was refused with these four errors; `self.x_y == 'a'` did not compile (nor did `has(self.x_y)`, which the
  // evaluator's type check lets through).
  it('names a property that is not a CEL identifier as the server escapes it (-, ., /, __, reserved words)', () => {
    const spec = { 'x-y': str, namespace: str, 'a.b/c': int, x__z: str };
    const rules = [
      {
        rule: "!has(self.x__dash__y) || self.x__dash__y.startsWith('ok')",
        message: 'x-y must start with ok',
      },
      {
        rule: "!has(self.__namespace__) || self.__namespace__ != 'bad'",
        message: 'namespace must not be bad',
      },
      {
        rule: '!has(self.a__dot__b__slash__c) || self.a__dot__b__slash__c > 0',
        message: 'a.b/c must be positive',
      },
      { rule: '!has(self.x__underscores__z) || self.x__underscores__z.size() < 3', message: 'x__z too long' },
    ];
    expect(check(spec, rules, { 'x-y': 'okay' })).toEqual([]);
    expect(check(spec, rules, { 'x-y': 'nope', namespace: 'bad', 'a.b/c': 0, x__z: 'abcd' })).toEqual([
      'spec: Invalid value: "object": x-y must start with ok',
      'spec: Invalid value: "object": namespace must not be bad',
      'spec: Invalid value: "object": a.b/c must be positive',
      'spec: Invalid value: "object": x__z too long',
    ]);
    const { errors } = compileRules({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { 'x-y': str },
          'x-kubernetes-validations': [{ rule: "self.x_y == 'a'" }],
        },
      },
    });
    expect(errors.map((e) => e.detail)).toEqual([
      "compilation failed: ERROR: <input>:1:5: undefined field 'x_y'\n | self.x_y == 'a'\n | ....^",
    ]);
  });
});
