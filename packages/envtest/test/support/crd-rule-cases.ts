/**
 * CRDs whose `x-kubernetes-validations` kube-apiserver 1.32 compiles or refuses when the CRD is created: one CRD per
 * case, a root schema whose `spec` carries the case's rules. Recorded from a real server into
 * test/golden/crd-rules/table.json (status and message per case; README there), then compared with envtest's
 * answer (test/server/crd-rule-compilation.test.ts) and with @kubeloop/crd's compile check
 * (packages/crd/test/rule-compilation.test.ts reads the same table).
 *
 * Part 1 (undeclared fields): every way a rule names a field of a declared object type — `has()`, plain and
 * optional selection, nested, inside macros, on `oldSelf`, in a messageExpression — and the schema nodes whose
 * type the server leaves open (preserve-unknown-fields, embedded resources, int-or-string, maps).
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON fixtures
export type Json = any;

export const RULE_GROUP = 'celfid.kubeloop.dev';

export interface RuleCase {
  /** Case name, also the CRD's plural (`<name>s` with dashes removed). */
  readonly name: string;
  /** The `spec` schema node (its rules included). */
  readonly spec: Json;
  /** Rules at the resource root (`self` is the whole object). */
  readonly rootRules?: Json[];
}

const str = { type: 'string' };
const obj = (properties: Json, extra: Json = {}) => ({ type: 'object', properties, ...extra });
const rules = (...r: (string | Json)[]) => ({
  'x-kubernetes-validations': r.map((x) => (typeof x === 'string' ? { rule: x } : x)),
});
const items = {
  type: 'array',
  items: obj({ a: str, b: { type: 'integer' } }, { required: ['a'] }),
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['a'],
  maxItems: 10,
};
/** spec: { a: string, sub: { a: string }, items: [ { a, b } ], m: map<string, { a }> }, with `r` on spec. */
const spec = (...r: (string | Json)[]) =>
  obj(
    {
      a: { type: 'string', maxLength: 10 },
      sub: obj({ a: { type: 'string', maxLength: 10 } }),
      items,
      m: {
        type: 'object',
        maxProperties: 10,
        additionalProperties: obj({ a: { type: 'string', maxLength: 10 } }),
      },
    },
    rules(...r),
  );

export const RULE_CASES: readonly RuleCase[] = [
  // has() of a field
  { name: 'has-declared', spec: spec('has(self.a)') },
  { name: 'has-undeclared', spec: spec('has(self.x)') },
  { name: 'has-nested-declared', spec: spec('has(self.sub.a)') },
  { name: 'has-nested-undeclared', spec: spec('has(self.sub.nope)') },
  { name: 'has-nested-undeclared-middle', spec: spec('has(self.nope.a)') },
  { name: 'has-index-undeclared', spec: spec('has(self.items[0].nope)') },
  { name: 'has-index-declared', spec: spec('has(self.items[0].b)') },
  { name: 'has-map-key', spec: spec('has(self.m.anykey)') },
  { name: 'has-map-value-undeclared', spec: spec("has(self.m['k'].nope)") },
  { name: 'has-map-value-declared', spec: spec("has(self.m['k'].a)") },
  { name: 'has-optional-undeclared', spec: spec('has(self.?x)') },
  // plain and optional selection
  { name: 'select-undeclared', spec: spec("self.x == 'a'") },
  { name: 'select-nested-undeclared', spec: spec("self.sub.nope == 'a'") },
  { name: 'select-index-undeclared', spec: spec("self.items[0].nope == 'a'") },
  { name: 'optional-undeclared', spec: spec("self.?x.orValue('') == ''") },
  { name: 'optional-declared', spec: spec("self.?a.orValue('') == ''") },
  { name: 'optional-nested-undeclared', spec: spec("self.sub.?nope.orValue('') == ''") },
  { name: 'optional-chain-undeclared', spec: spec("self.?sub.?nope.orValue('') == ''") },
  { name: 'optional-chain-declared', spec: spec("self.?sub.?a.orValue('') == ''") },
  // macros and comprehensions
  { name: 'all-has-undeclared', spec: spec('self.items.all(i, has(i.nope))') },
  { name: 'all-has-declared', spec: spec('self.items.all(i, has(i.b))') },
  { name: 'all-select-undeclared', spec: spec("self.items.all(i, i.nope == 'x')") },
  { name: 'exists-has-undeclared', spec: spec('self.items.exists(i, has(i.nope))') },
  { name: 'exists-one-undeclared', spec: spec("self.items.exists_one(i, i.nope == 'x')") },
  { name: 'map-undeclared', spec: spec('self.items.map(i, i.nope).size() >= 0') },
  { name: 'map-filter-undeclared', spec: spec('self.items.map(i, has(i.b), i.nope).size() >= 0') },
  { name: 'filter-has-undeclared', spec: spec('self.items.filter(i, has(i.nope)).size() >= 0') },
  { name: 'map-keys-undeclared', spec: spec('self.m.all(k, has(self.m[k].nope))') },
  {
    name: 'nested-comprehension-undeclared',
    spec: spec('self.items.all(i, self.items.exists(j, has(j.nope)))'),
  },
  { name: 'list-literal-undeclared', spec: spec('[self.sub].all(s, has(s.nope))') },
  { name: 'dyn-undeclared', spec: spec('has(dyn(self).nope) || true') },
  // oldSelf, transition rules
  { name: 'oldself-has-undeclared', spec: spec('has(oldSelf.x) || has(self.a)') },
  { name: 'oldself-select-undeclared', spec: spec('oldSelf.x == self.a') },
  { name: 'oldself-declared', spec: spec('oldSelf.a == self.a') },
  {
    name: 'optional-oldself-undeclared',
    spec: spec({ rule: '!oldSelf.hasValue() || has(oldSelf.value().x)', optionalOldSelf: true }),
  },
  {
    name: 'optional-oldself-declared',
    spec: spec({
      rule: '!oldSelf.hasValue() || has(oldSelf.value().a) || has(self.a)',
      optionalOldSelf: true,
    }),
  },
  {
    name: 'optional-oldself-optional-select',
    spec: spec({ rule: "oldSelf.?x.orValue('') == ''", optionalOldSelf: true }),
  },
  // messageExpression
  {
    name: 'message-has-undeclared',
    spec: spec({ rule: 'true', messageExpression: "has(self.x) ? 'a' : 'b'" }),
  },
  { name: 'message-select-undeclared', spec: spec({ rule: 'true', messageExpression: 'self.x' }) },
  { name: 'message-declared', spec: spec({ rule: 'true', messageExpression: "has(self.a) ? self.a : 'b'" }) },
  // the resource root: apiVersion, kind and metadata.name/generateName only
  { name: 'root-metadata-name', spec: spec(), rootRules: [{ rule: 'has(self.metadata.name)' }] },
  { name: 'root-metadata-labels', spec: spec(), rootRules: [{ rule: 'has(self.metadata.labels)' }] },
  { name: 'root-kind', spec: spec(), rootRules: [{ rule: "self.kind != ''" }] },
  { name: 'root-status-undeclared', spec: spec(), rootRules: [{ rule: 'has(self.status)' }] },
  // nodes whose type is open or dyn
  {
    name: 'preserve-unknown-has-undeclared',
    spec: obj({ a: str }, { 'x-kubernetes-preserve-unknown-fields': true, ...rules('has(self.x)') }),
  },
  {
    name: 'preserve-unknown-select-undeclared',
    spec: obj({ a: str }, { 'x-kubernetes-preserve-unknown-fields': true, ...rules("self.x == 'a'") }),
  },
  {
    name: 'preserve-unknown-no-properties',
    spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, ...rules('has(self.x)') },
  },
  {
    name: 'preserve-unknown-child-untyped',
    spec: obj({ u: { 'x-kubernetes-preserve-unknown-fields': true } }, rules('has(self.u)')),
  },
  {
    name: 'preserve-unknown-child-has-deep',
    spec: obj(
      { u: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      rules('has(self.u.x)'),
    ),
  },
  {
    name: 'embedded-has-undeclared',
    spec: obj(
      {
        e: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          'x-kubernetes-preserve-unknown-fields': true,
        },
      },
      rules('has(self.e.spec)'),
    ),
  },
  {
    name: 'embedded-kind',
    spec: obj(
      {
        e: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          'x-kubernetes-preserve-unknown-fields': true,
        },
      },
      rules("self.e.kind != '' && has(self.e.metadata.name)"),
    ),
  },
  {
    name: 'int-or-string-select',
    spec: obj({ p: { 'x-kubernetes-int-or-string': true } }, rules('has(self.p.x) || true')),
  },
  {
    name: 'escaped-declared',
    spec: obj({ 'x-y': str, namespace: str }, rules('has(self.x__dash__y) && has(self.__namespace__)')),
  },
  {
    name: 'escaped-unescaped-reserved',
    spec: obj({ namespace: str }, rules('has(self.namespace)')),
  },
  {
    name: 'select-unescaped-reserved',
    spec: obj({ namespace: str }, rules("self.namespace == 'a' && self.__namespace__ == 'a'")),
  },
  { name: 'has-scalar-operand', spec: spec('has(self.a.x)') },
  { name: 'select-scalar-operand', spec: spec("self.a.x == 'b'") },
  { name: 'has-of-variable', spec: spec('has(self)') },
  { name: 'root-metadata-namespace', spec: spec(), rootRules: [{ rule: "self.metadata.namespace == 'x'" }] },
];

/** The CRD of one case: `<plural>.<RULE_GROUP>`, one served storage version `v1`. */
export function ruleCaseCrd(c: RuleCase, prefix = ''): Json {
  const plural = `${prefix}${c.name.replace(/-/g, '')}s`;
  const kind = `R${plural.replace(/s$/, '')}`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${RULE_GROUP}` },
    spec: {
      group: RULE_GROUP,
      scope: 'Namespaced',
      names: { plural, singular: plural.replace(/s$/, ''), kind, listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { spec: c.spec },
              ...(c.rootRules ? { 'x-kubernetes-validations': c.rootRules } : {}),
            },
          },
        },
      ],
    },
  };
}
