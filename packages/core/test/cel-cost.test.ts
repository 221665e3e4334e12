/**
 * The estimated cost of CRD rules (kube-apiserver 1.32's cel-go estimate with the Kubernetes library costs). The
 * figures against the real server are the cost table of @kubeloop/envtest (test/golden/crd-rules/cost-table.json:
 * every refusal's factor reproduced); these tests pin the arithmetic of single constructs, worked out by hand from
 * cel-go's and the library's rules, and what the estimator does not know (`undefined`: the rule is accepted).
 */
import { Environment } from '@marcbachmann/cel-js';
import { describe, expect, it } from 'vitest';
import {
  type CelAstNode,
  type CelSchemaNode,
  celCostMessage,
  celSizeType,
  estimateCelCost,
  ruleCardinality,
} from '../src/cel.js';

const env = new Environment({ enableOptionalTypes: true });
const str = (maxLength?: number) => ({ type: 'string', ...(maxLength === undefined ? {} : { maxLength }) });
const SPEC: CelSchemaNode = {
  type: 'object',
  properties: {
    s: str(),
    t: str(10),
    n: { type: 'integer' },
    d: { type: 'number' },
    b: { type: 'boolean' },
    e: { type: 'string', enum: ['ab', 'abcd'] },
    ts: { type: 'string', format: 'date-time' },
    dt: { type: 'string', format: 'date' },
    du: { type: 'string', format: 'duration' },
    by: { type: 'string', format: 'byte' },
    l: { type: 'array', items: str(5), maxItems: 4 },
    u: { type: 'array', items: { type: 'integer' } },
    m: { type: 'object', additionalProperties: str(5), maxProperties: 3 },
    mu: { type: 'object', additionalProperties: { type: 'integer' } },
    p: { 'x-kubernetes-int-or-string': true },
    o: { type: 'object', required: ['a'], properties: { a: str(), 'x-y': str(1) } },
  },
};
const root = celSizeType(SPEC) as NonNullable<ReturnType<typeof celSizeType>>;
const cost = (rule: string) =>
  estimateCelCost((env.parse(rule) as unknown as { ast: CelAstNode }).ast, root)?.max;
const MAX = 3n * 1024n * 1024n - 2n;

describe('celSizeType', () => {
  it('sizes schema nodes as apiserver SchemaDeclType does', () => {
    const f = root.fields ?? {};
    expect(f.s?.maxElements).toBe(MAX);
    expect(f.t?.maxElements).toBe(40n); // maxLength x 4 (bytes of runes)
    expect(f.e?.maxElements).toBe(4n); // the longest enum value
    expect([f.ts?.maxElements, f.dt?.maxElements, f.du?.maxElements, f.by?.maxElements]).toEqual([
      32n,
      12n,
      32n,
      MAX,
    ]);
    expect(f.u?.maxElements).toBe(MAX / 2n); // 3 MiB - 2 over (smallest int 1 + comma 1)
    expect(f.mu?.maxElements).toBe(MAX / 7n); // a key-value pair is at least 6 bytes plus the value
    expect(f.p?.kind).toBe('dyn');
    expect(f.o?.minSize).toBe(2n + 1n + 2n + 4n); // {} plus "a":"" of the required property
    expect(f.o?.fields?.x__dash__y?.maxElements).toBe(4n);
    expect(celSizeType({ type: 'array', items: {} })).toBeUndefined();
    expect(celSizeType({ type: 'object', additionalProperties: {} })).toBeUndefined();
    expect(celSizeType(undefined)).toBeUndefined();
    expect(
      celSizeType({ type: 'object', properties: {} }, true)?.fields?.metadata?.fields?.generateName?.kind,
    ).toBe('string');
  });
});

describe('estimateCelCost', () => {
  it('costs selections, literals and O(1) operators', () => {
    expect(cost('self.n > 1')).toBe(3n); // self 1, select 1, call 1
    expect(cost('!self.b && -self.n < 0 || self.d / 2.0 > 1.0')).toBe(11n); // && and ||: left, plus right at most
    expect(cost('self.n % 2 == 0 && self.n * 2 - 1 + 3 >= 0')).toBe(10n);
    expect(cost('has(self.s)')).toBe(1n); // presence tests are free (PresenceTestHasCost(false))
    expect(cost("self.?s.orValue('') == ''")).toBe(3n); // .?s 2, orValue 1; its result has no size bound: '' is 0
    expect(cost('self.l[0] == self.m["k"]')).toBe(8n); // two index calls (3 each); items of maxLength 5: 20 bytes, x 0.1
    expect(cost("self.p == 'a'")).toBe(3n);
    expect(cost("self.o.x__dash__y == 'a'")).toBe(4n);
    expect(cost('self.ts < self.ts && self.du == self.du')).toBe(13n); // timestamps compare in O(1); durations' 32 bytes x 0.1
    expect(cost("b'abc' == self.by")).toBe(3n);
    expect(cost('null == null')).toBe(1n);
    expect(cost('[1, 2].size() == 2')).toBe(12n);
    expect(cost('[].size() == 0 && [self.l, self.l].all(x, x.size() > 0)')).toBeDefined();
    expect(cost('self.l + self.l == self.l')).toBe(2n + 2n + 1n + 1n + 2n); // list + is O(1); sizes 8 and 4
    expect(cost('uint(1) > uint(0) && double(self.n) > 1.0 && bool(self.b) && dyn(self.n) == 1')).toBe(14n);
    expect(cost('dyn(self).t == "a"')).toBe(2n); // a selection on dyn is free; its path ['t'] names the root (size 0)
    expect(cost("self.l.join() == '' && self.l.map(x, x).map(y, y.size()).all(z, z > 0)")).toBeDefined();
    expect(
      cost("self.m.filter(k, k != '').all(k, k.size() > 0) && self.m.map(k, k).size() > 0"),
    ).toBeDefined();
    expect(
      cost(
        "quantity(self.t).isInteger() && url(self.t).getScheme() == 'a' && url(self.t).getHostname() == ''",
      ),
    ).toBeDefined();
  });

  it('costs string functions by the sizes of their operands', () => {
    // ceil(40 x 0.1) = 4 per traversal of t
    expect(cost("self.t.startsWith('ab')")).toBe(2n + 1n);
    expect(cost('self.t.contains(self.t)')).toBe(4n + 16n);
    expect(cost("self.t.matches('^a+$')")).toBe(2n + 5n * 1n); // (40 + 1) x 0.1 times 4 x 0.25
    expect(cost("self.t.lowerAscii().upperAscii().trim() == 'x'")).toBe(2n + 4n * 3n + 1n);
    expect(cost("self.t + self.t == 'x'")).toBe(4n + 8n + 1n);
    expect(cost("self.t.split(',', 2).size() == 2")).toBe(2n + 8n + 1n + 1n);
    expect(cost("self.l.join('-') == 'x'")).toBe(2n + 9n + 1n); // 4 items x 20 + 3 separators = 83, x 0.1
    expect(cost("self.t.find('a') == 'a'")).toBe(2n + 5n + 1n);
    expect(cost("self.t in self.l && 'a' in self.m")).toBe(4n + 4n + 3n);
    expect(cost('self.t < self.e')).toBe(5n);
    expect(cost('(self.b ? self.t : self.e).size() > 0')).toBe(6n);
  });

  it('costs comprehensions: range size times the step and loop condition', () => {
    // all: init 0, result 1, per item step (1 + p) and loop condition 2; p = x.size() > 0 = 3
    expect(cost('self.l.all(x, x.size() > 0)')).toBe(2n + 1n + 4n * (4n + 2n));
    expect(cost('self.l.exists(x, x == "a")')).toBe(2n + 1n + 4n * (3n + 3n));
    expect(cost('self.l.exists_one(x, x == "a")')).toBe(2n + 2n + 4n * (2n + 2n));
    expect(cost('self.l.map(x, x + "a").size() > 0')).toBe(2n + 10n + 1n + 4n * (12n + 4n) + 2n);
    expect(cost('self.l.map(x, x != "", x).size() > 0')).toBe(2n + 10n + 1n + 4n * (1n + 13n) + 2n);
    expect(cost('self.l.filter(x, x != "").size() > 0')).toBe(2n + 10n + 1n + 4n * (1n + 13n) + 2n);
    expect(cost('self.m.all(k, self.m[k] != k)')).toBe(2n + 1n + 3n * (1n + 5n + 2n));
    expect(cost('self.u.all(x, x > 0)')).toBe(2n + 1n + (MAX / 2n) * 5n);
  });

  it('says undefined for what it does not know, so the rule is accepted', () => {
    for (const rule of [
      "self.s.reverse() == ''",
      'format.dns1123Label().validate(self.s).hasValue()',
      'self.m.size() + self.d > 0.0',
      'size(self.p) > 0',
      'self.p + 1 > 0',
      'self.nope == 1',
      "quantity('1') == quantity('1')",
      'self.l.all(x, y, true)',
      "self.n.charAt(0) == 'a'",
      'self.b in self.b',
      'int(self.d) + self.d > 0',
      'self.n.startsWith("a")',
      'self.n.contains("a")',
      'self.n.matches("a")',
      'self.n.lowerAscii() == ""',
      'self.n.split(",").size() > 0',
      'self.n.join(",") == ""',
      'self.n.find("a") == ""',
      'quantity(self.n) == quantity("1")',
      'isURL(self.n)',
      'self.t.sign() > 0',
      'self.t.asApproximateFloat() > 0.0',
      'self.t.isInteger()',
      'self.t.getHost() == ""',
      'self.n.all(x, true)',
      'self.n[0] > 0',
      'self.b < self.t',
      'self.n - self.d > 0.0',
      'dyn(self).x.y.z == "a" && self.n.x == 1',
      'self.l.all(x, self.l.exists_one(y, y == x)) && self.l.sortBy(x, x).size() > 0',
    ])
      expect(cost(rule), rule).toBeUndefined();
  });

  it('costs the lists library, string extensions, optionals, sets and map literals', () => {
    // 4 items x (1 + 20 bytes x 0.1)
    expect(cost("self.l.indexOf('a') >= 0")).toBe(2n + 4n * 3n + 1n);
    expect(cost('self.u.sum() > 0 && self.u.isSorted()')).toBe(2n + MAX / 2n + 1n + (2n + MAX / 2n));
    expect(cost("self.s.indexOf('a') >= 0")).toBe(2n + 314573n + 1n);
    expect(cost("self.t.substring(1) == 'a'")).toBe(2n + 4n + 1n);
    expect(cost("self.t.charAt(1) == 'a'")).toBe(2n + 1n + 1n);
    // 40 bytes x 0.2; at most 40 replacements of 2 bytes: the result is 80 bytes, x 0.1 for the equality
    expect(cost("self.t.replace('a', 'bb') == self.s")).toBe(2n + 8n + 2n + 8n);
    expect(cost("self.t.replace('', 'b', 1).size() > 0")).toBeDefined();
    expect(
      cost("self.t.replace('ab', '').size() > 0 && self.t.replace(self.t, 'c').size() > 0"),
    ).toBeDefined();
    expect(cost("self.?t.orValue('') == '' && self.?t.hasValue() && optional.of(1).hasValue()")).toBe(8n);
    // |l| x |l| (x 2 for equivalent), plus the call
    expect(cost('sets.contains(self.l, self.l)')).toBe(16n + 1n + 4n);
    expect(cost('sets.equivalent(self.l, self.l)')).toBe(32n + 1n + 4n);
    expect(cost("'a' in {'a': 1, 'b': self.n}")).toBe(30n + 2n + 1n);
    for (const rule of [
      'sets.union(self.l, self.l).size() > 0',
      'self.n.indexOf(1) > 0',
      'self.t.replace("a").size() > 0',
      'self.?t.value() == ""',
    ])
      expect(cost(rule), rule).toBeUndefined();
  });

  it('costs the Kubernetes libraries it knows', () => {
    expect(cost("quantity(self.t).isGreaterThan(quantity('1'))")).toBe(2n + 4n + 1n + 1n);
    expect(
      cost('isQuantity(self.t) && quantity(self.t).asInteger() > 0 && quantity(self.t).sign() == 1'),
    ).toBeDefined();
    expect(cost('ip(self.t).family() == 4 && isIP(self.t) && cidr(self.t).prefixLength() > 0')).toBeDefined();
    expect(cost("url(self.t).getHost() == 'a' && isURL(self.t)")).toBe(2n + 4n + 1n + 1n + 0n + 3n);
    expect(cost('quantity(self.t).asApproximateFloat() > 1.0 && ip(self.t).isLoopback()')).toBeDefined();
    // containsIP: two addresses of 4 to 16 bytes, x 0.1 (1..4), plus the string argument's parse (40 x 0.1)
    expect(cost('cidr(self.t).containsIP(self.t)')).toBe(4n + 2n + 4n + 4n + 2n);
    expect(
      cost('cidr(self.t).containsCIDR(cidr(self.t).masked()) && cidr(self.t).ip().isLinkLocalUnicast()'),
    ).toBeDefined();
    expect(cost('ip(self.t).containsIP(self.n)')).toBeUndefined();
  });
});

describe('ruleCardinality and the message', () => {
  it('multiplies bounded lists and maps, else divides the request by the node size', () => {
    const list = (maxItems?: number) => ({ type: 'array', ...(maxItems === undefined ? {} : { maxItems }) });
    expect(
      ruleCardinality(
        [{ type: 'object' }, list(10), { type: 'object', additionalProperties: {}, maxProperties: 3 }],
        2n,
      ),
    ).toBe(30n);
    expect(ruleCardinality([list(10), list()], 2n)).toBe((3n * 1024n * 1024n) / 3n);
    expect(ruleCardinality([{ type: 'object', additionalProperties: {} }], 9n)).toBe(
      (3n * 1024n * 1024n) / 10n,
    );
    expect(ruleCardinality([], 2n)).toBe(1n);
  });

  it('prints the factor as the server does', () => {
    const m = (c: bigint) => celCostMessage('estimated rule cost', c, 10_000_000n).split(' (')[0];
    expect(m(13_631_488n)).toBe('estimated rule cost exceeds budget by factor of 1.363149x');
    expect(m(22_500_000n)).toBe('estimated rule cost exceeds budget by factor of 2.2x'); // ties to even, as Go
    expect(m(27_500_000n)).toBe('estimated rule cost exceeds budget by factor of 2.8x');
    expect(m(24_500_000n)).toBe('estimated rule cost exceeds budget by factor of 2.5x'); // 2.45 is above the tie
    expect(m(31_457_304n)).toBe('estimated rule cost exceeds budget by factor of 3.1x');
    expect(m(10_000_000_000n)).toBe('estimated rule cost exceeds budget by factor of more than 100x');
  });
});
