/**
 * CRDs whose rules kube-apiserver 1.32 refuses, or accepts, by their estimated cost: one CRD per case (the rules on
 * `spec`, on list items or map values), recorded from a real server into test/golden/crd-rules/cost-table.json and
 * compared with envtest's answer (test/server/crd-rule-compilation.test.ts). The server's message carries the
 * factor by which a rule exceeds the budget, so each refused row checks the estimate itself.
 */
import type { Json, RuleCase } from './crd-rule-cases.js';

const str = (maxLength?: number) => ({ type: 'string', ...(maxLength !== undefined ? { maxLength } : {}) });
const list = (items: Json, maxItems?: number) => ({
  type: 'array',
  items,
  ...(maxItems !== undefined ? { maxItems } : {}),
});
const map = (values: Json, maxProperties?: number) => ({
  type: 'object',
  additionalProperties: values,
  ...(maxProperties !== undefined ? { maxProperties } : {}),
});
const withRules = (node: Json, ...rules: (string | Json)[]) => ({
  ...node,
  'x-kubernetes-validations': rules.map((r) => (typeof r === 'string' ? { rule: r } : r)),
});
/** spec with the given properties and rules on spec itself. */
const spec = (properties: Json, ...rules: (string | Json)[]) =>
  withRules({ type: 'object', properties }, ...rules);

const S = str();
export const COST_CASES: readonly RuleCase[] = [
  // strings without maxLength: 3 MiB - 2 characters
  { name: 'cost-contains-unbounded', spec: spec({ s: S, t: S }, 'self.s.contains(self.t)') },
  { name: 'cost-contains-bounded-arg', spec: spec({ s: str(1000), t: S }, 'self.t.contains(self.s)') },
  { name: 'cost-matches-bounded', spec: spec({ s: str(1000), t: str(1000) }, 'self.s.matches(self.t)') },
  { name: 'cost-matches-unbounded-string', spec: spec({ s: S, t: str(100) }, 'self.s.matches(self.t)') },
  { name: 'cost-matches-literal', spec: spec({ s: S }, "self.s.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')") },
  { name: 'cost-startswith', spec: spec({ s: S, t: S }, 'self.s.startsWith(self.t)') },
  { name: 'cost-endswith-literal', spec: spec({ s: S }, "self.s.endsWith('.example.com')") },
  { name: 'cost-lowerascii-eq', spec: spec({ s: S, t: S }, 'self.s.lowerAscii() == self.t') },
  { name: 'cost-concat-eq', spec: spec({ s: S, t: S }, "self.s + self.t == 'x'") },
  { name: 'cost-string-less', spec: spec({ s: S, t: S }, 'self.s < self.t') },
  { name: 'cost-string-eq', spec: spec({ s: S, t: S }, 'self.s == self.t') },
  { name: 'cost-size', spec: spec({ s: S }, 'size(self.s) < 10 && self.s.size() > 1') },
  {
    name: 'cost-enum-contains',
    spec: spec({ s: { type: 'string', enum: ['aa', 'bbbb'] }, t: S }, 'self.t.contains(self.s)'),
  },
  // comprehensions over lists and maps
  {
    name: 'cost-all-contains',
    spec: spec({ l: list(str(64)), s: str(64) }, 'self.l.all(x, x.contains(self.s))'),
  },
  {
    name: 'cost-all-contains-bounded',
    spec: spec({ l: list(str(64), 100), s: str(64) }, 'self.l.all(x, x.contains(self.s))'),
  },
  { name: 'cost-nested-all', spec: spec({ l: list(str(10), 2000) }, 'self.l.all(a, self.l.all(b, a == b))') },
  {
    name: 'cost-nested-exists-unbounded',
    spec: spec({ l: list(str(10)) }, 'self.l.exists(a, self.l.exists(b, a != b))'),
  },
  {
    name: 'cost-exists-matches',
    spec: spec({ l: list(str(253)), s: str(100) }, 'self.l.exists(x, x.matches(self.s))'),
  },
  {
    name: 'cost-exists-one',
    spec: spec({ l: list(str(1000)) }, "self.l.exists_one(x, x.startsWith('a') && x.contains('bc'))"),
  },
  {
    name: 'cost-map-all',
    spec: spec({ m: map(str(5000)) }, 'self.m.all(k, self.m[k].size() > 0 && self.m[k].contains(k))'),
  },
  { name: 'cost-map-bounded', spec: spec({ m: map(str(5000), 50) }, 'self.m.all(k, self.m[k].contains(k))') },
  {
    name: 'cost-filter-map',
    spec: spec({ l: list(str(300)) }, "self.l.filter(x, x.startsWith('a')).map(x, x + 'b').size() > 0"),
  },
  {
    name: 'cost-map-filter-form',
    spec: spec(
      { l: list(str(300), 5000) },
      "self.l.map(x, x.size() > 1, x.lowerAscii()).exists(y, y == 'abc')",
    ),
  },
  {
    name: 'cost-in-list',
    spec: spec({ l: list(str(100)), s: str(100) }, 'self.s in self.l && self.l.all(x, x in self.l)'),
  },
  {
    name: 'cost-list-eq',
    spec: spec({ l: list(str(10)), k: list(str(10)) }, 'self.l == self.k || self.l.all(x, self.k == self.l)'),
  },
  { name: 'cost-split', spec: spec({ s: str(100000) }, "self.s.split(',').all(x, x.contains('='))") },
  { name: 'cost-join', spec: spec({ l: list(str(1000)) }, "self.l.join(',').contains('x,y')") },
  { name: 'cost-find-all', spec: spec({ s: S }, "self.s.findAll('[0-9]+').size() < 3") },
  {
    name: 'cost-ternary',
    spec: spec({ s: S, t: S, b: { type: 'boolean' } }, "(self.b ? self.s : self.t).contains('abc' + self.s)"),
  },
  {
    name: 'cost-dyn-eq',
    spec: spec(
      { p: { 'x-kubernetes-int-or-string': true }, q: { 'x-kubernetes-int-or-string': true } },
      'self.p == self.q',
    ),
  },
  {
    name: 'cost-quantity',
    spec: spec(
      { q: S, l: list(S) },
      'self.l.all(x, isQuantity(x) && quantity(x).isGreaterThan(quantity(self.q)))',
    ),
  },
  { name: 'cost-ip', spec: spec({ l: list(S) }, 'self.l.all(x, isIP(x) && ip(x).family() == 4)') },
  {
    name: 'cost-cidr',
    spec: spec(
      { l: list(S), c: S },
      'self.l.all(x, cidr(self.c).containsIP(x) && cidr(self.c).containsCIDR(cidr(x).masked()) && cidr(x).ip().isLinkLocalUnicast())',
    ),
  },
  {
    name: 'cost-cidr-bounded',
    spec: spec(
      { l: list(str(43), 100), c: str(43) },
      'self.l.all(x, cidr(self.c).containsIP(ip(x)) && cidr(self.c).containsCIDR(x))',
    ),
  },
  { name: 'cost-url', spec: spec({ l: list(S) }, "self.l.exists(x, isURL(x) && url(x).getHost() == 'a')") },
  {
    name: 'cost-date-time',
    spec: spec(
      { l: list({ type: 'string', format: 'date-time' }) },
      'self.l.all(a, self.l.all(b, a <= b || a > b))',
    ),
  },
  // where a rule sits: list items and map values multiply its cost
  { name: 'cost-items-unbounded', spec: spec({ l: list(withRules(str(200), "self.contains('abc')")) }) },
  {
    name: 'cost-items-bounded',
    spec: spec({ l: list(withRules(str(200), "self.contains('abcdefghij')"), 10000) }),
  },
  {
    name: 'cost-items-object',
    spec: spec({
      l: list(
        withRules(
          { type: 'object', required: ['name'], properties: { name: str(100), prefix: str(100) } },
          'self.name.startsWith(self.prefix) && self.name.contains(self.prefix)',
        ),
      ),
    }),
  },
  { name: 'cost-map-values', spec: spec({ m: map(withRules(str(1000), "self.matches('^[a-z]+$')")) }) },
  {
    name: 'cost-nested-lists',
    spec: spec({ l: list(list(withRules(str(50), "self.contains('ab')"), 100), 100) }),
  },
  // messageExpression: its own cost, not multiplied
  {
    name: 'cost-message-concat',
    spec: spec({ s: S, t: S }, { rule: 'true', messageExpression: "'bad: ' + self.s + ' and ' + self.t" }),
  },
  {
    name: 'cost-message-items',
    spec: spec({ l: list(withRules(S, { rule: "self != ''", messageExpression: "'got ' + self" })) }),
  },
  {
    name: 'cost-message-comprehension',
    spec: spec(
      { l: list(str(64)), s: str(64) },
      { rule: 'true', messageExpression: "self.l.filter(x, x.contains(self.s)).join(', ')" },
    ),
  },
  // the total of a CRD: twelve rules over the per-rule limit, and twelve under it, over the CRD's together
  {
    name: 'cost-crd-rules-over',
    spec: spec(
      Object.fromEntries(
        Array.from({ length: 12 }, (_, i) => [`l${i}`, list(withRules(str(30), "self.contains('abc')"))]),
      ),
    ),
  },
  {
    name: 'cost-crd-total',
    spec: spec(
      Object.fromEntries(
        Array.from({ length: 12 }, (_, i) => [`l${i}`, list(withRules(str(20), "self.contains('abc')"))]),
      ),
    ),
  },
  // the lists library, string extensions, optionals, sets, map literals
  { name: 'cost-index-of', spec: spec({ l: list(str(100)), s: str(100) }, 'self.l.indexOf(self.s) >= 0') },
  {
    name: 'cost-is-sorted',
    spec: spec({ l: list(str(10)) }, "self.l.isSorted() && self.l.lastIndexOf('a') < 5"),
  },
  { name: 'cost-literal-index-of', spec: spec({ s: S }, "['a', 'b', 'a'].indexOf('a') == 0") },
  {
    name: 'cost-char-at-replace',
    spec: spec({ s: str(10) }, "self.s.charAt(1) == 'é' && self.s.replace('a', 'b', 2) == 'bba'"),
  },
  { name: 'cost-string-index-of', spec: spec({ s: S }, "self.s.indexOf('a') >= 0") },
  { name: 'cost-replace', spec: spec({ s: str(1000), t: S }, "self.s.replace('a', 'bb').contains(self.t)") },
  { name: 'cost-substring', spec: spec({ s: str(2000), t: S }, 'self.s.substring(1).contains(self.t)') },
  {
    name: 'cost-char-at',
    spec: spec({ l: list(str(10), 2000) }, 'self.l.all(x, self.l.exists(y, x.charAt(0) == y.charAt(0)))'),
  },
  {
    name: 'cost-sets-contains',
    spec: spec({ l: list(str(10), 5000), k: list(str(10), 5000) }, 'sets.contains(self.l, self.k)'),
  },
  {
    name: 'cost-sets-equivalent',
    spec: spec(
      { l: list(str(10), 5000), k: list(str(10), 5000) },
      'sets.equivalent(self.l, self.k) || sets.intersects(self.l, self.k)',
    ),
  },
  {
    name: 'cost-optional',
    spec: spec({ s: S, t: str(5) }, "self.?s.orValue('') == self.t && optional.of(self.s).hasValue()"),
  },
  { name: 'cost-map-literal', spec: spec({ s: S }, "self.s in {'a': 1, 'b': 2}") },
  {
    name: 'cost-optional-items',
    spec: spec({
      l: list(
        withRules(
          { type: 'object', properties: { name: str(200) } },
          "self.?name.orValue('').contains('abc')",
        ),
      ),
    }),
  },
  { name: 'cost-sum', spec: spec({ l: list({ type: 'integer' }) }, 'self.l.sum() > 0 && self.l.min() >= 0') },
  // a library this estimator does not cost: accepted by envtest whatever the server says (never refuse more)
  {
    name: 'cost-unknown-format',
    spec: spec({ l: list(S) }, 'self.l.all(x, !format.dns1123Label().validate(x).hasValue())'),
  },
];
