/**
 * The custom resources envtest must refuse exactly as kube-apiserver 1.32 does: two CRDs (value validations on
 * `widgets`, CEL rules on `gadgets`) and one invalid object per case. Used by the envtest test
 * (test/server/cr-validation.test.ts), which compares each 422 with the golden recorded from a real server in
 * test/golden/cr-validation/ (scripts/record-cr-validation.mjs writes them; README there says how), and, until a
 * golden exists, with the message read from the upstream source (`message`).
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON fixtures
export type Json = any;

export const GROUP = 'envval.kubeloop.dev';

/** A CRD of `group` with one served storage version `v1` and the given root schema. */
export function crd(plural: string, kind: string, schema: Json): Json {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: schema },
          subresources: { status: {} },
        },
      ],
    },
  };
}

const str = { type: 'string' };

/** Value validations: one property per keyword. */
export const WIDGETS = crd('widgets', 'Widget', {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['size'],
      properties: {
        size: { type: 'integer', minimum: 1, maximum: 10 },
        ratio: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true },
        step: { type: 'integer', multipleOf: 5 },
        name: { type: 'string', minLength: 3, maxLength: 8, pattern: '^[a-z]+$' },
        title: { type: 'string', maxLength: 4 },
        mode: { type: 'string', enum: ['Fast', 'Slow'] },
        level: { type: 'integer', enum: [1, 2, 3] },
        tags: { type: 'array', minItems: 1, maxItems: 3, items: str, 'x-kubernetes-list-type': 'set' },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            required: ['name'],
            properties: { name: str, port: { type: 'integer', minimum: 1, maximum: 65535 } },
          },
        },
        labels: {
          type: 'object',
          minProperties: 1,
          maxProperties: 2,
          additionalProperties: { type: 'string', maxLength: 5 },
        },
        url: { type: 'string', format: 'uri' },
        ip: { type: 'string', format: 'ipv4' },
        when: { type: 'string', format: 'date-time' },
        id: { type: 'string', format: 'uuid' },
        quantityLike: { type: 'string', format: 'quantity' },
        note: { type: 'string', nullable: true },
        port: { 'x-kubernetes-int-or-string': true },
        choice: {
          type: 'object',
          properties: { a: str, b: str },
          oneOf: [{ required: ['a'] }, { required: ['b'] }],
        },
        prefixed: { type: 'string', anyOf: [{ pattern: '^x' }, { pattern: '^y' }] },
        notForbidden: { type: 'string', not: { enum: ['forbidden'] } },
        bounded: { type: 'integer', allOf: [{ minimum: 1 }, { maximum: 5 }] },
        greeting: { type: 'string', default: 'hello' },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
    status: { type: 'object', properties: { ready: { type: 'boolean' } } },
  },
});

/** CEL rules (x-kubernetes-validations). */
export const GADGETS = crd('gadgets', 'Gadget', {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      'x-kubernetes-validations': [
        { rule: 'self.minReplicas <= self.maxReplicas', message: 'minReplicas must not exceed maxReplicas' },
        {
          rule: '!has(self.mode) || self.mode != "Locked" || self.maxReplicas == 1',
          messageExpression: "self.mode + ' gadgets run 1 replica'",
        },
        {
          rule: '!has(self.owner) || self.owner.startsWith("team-")',
          fieldPath: '.owner',
          reason: 'FieldValueForbidden',
        },
        {
          rule: 'self.tags.all(t, t.size() <= 5)',
          message: 'tags are at most 5 characters',
          reason: 'FieldValueInvalid',
        },
      ],
      properties: {
        minReplicas: { type: 'integer', default: 1 },
        maxReplicas: { type: 'integer', default: 1 },
        mode: { type: 'string', maxLength: 16 },
        owner: { type: 'string', maxLength: 32 },
        tags: { type: 'array', maxItems: 5, items: { type: 'string', maxLength: 16 }, default: [] },
        image: {
          type: 'string',
          maxLength: 128,
          'x-kubernetes-validations': [
            { rule: "self.matches('^[a-z0-9./-]+:[a-z0-9.]+$')", message: 'image must be name:tag' },
            { rule: 'self == oldSelf', message: 'image is immutable' },
          ],
        },
        endpoint: {
          type: 'string',
          maxLength: 256,
          'x-kubernetes-validations': [
            {
              rule: "isURL(self) && url(self).getScheme() == 'https'",
              message: 'endpoint must be an https URL',
            },
          ],
        },
        memory: {
          type: 'string',
          maxLength: 16,
          'x-kubernetes-validations': [
            {
              rule: "isQuantity(self) && quantity(self).compareTo(quantity('1Gi')) <= 0",
              message: 'memory must be at most 1Gi',
            },
          ],
        },
        addresses: {
          type: 'array',
          maxItems: 4,
          items: { type: 'string', maxLength: 64 },
          'x-kubernetes-validations': [
            { rule: 'self.all(a, isIP(a) && ip(a).family() == 4)', message: 'addresses must be IPv4' },
            { rule: 'self.isSorted()', message: 'addresses must be sorted' },
          ],
        },
        subnet: {
          type: 'string',
          maxLength: 64,
          'x-kubernetes-validations': [
            {
              rule: 'isCIDR(self) && cidr(self).prefixLength() >= 16',
              message: 'subnet must be /16 or smaller',
            },
          ],
        },
        priority: {
          type: 'integer',
          'x-kubernetes-validations': [{ rule: 'self >= oldSelf', message: 'priority may only grow' }],
        },
        name: {
          type: 'string',
          maxLength: 63,
          'x-kubernetes-validations': [
            { rule: '!format.dns1123Label().validate(self).hasValue()', message: 'name must be a DNS label' },
          ],
        },
      },
    },
  },
});

/** One invalid write and what the server answers. */
export interface Case {
  readonly name: string;
  /** `widgets` or `gadgets`. */
  readonly plural: 'widgets' | 'gadgets';
  /** The object's spec (a create), or for an update: `initial` is created first, then `spec` is PUT. */
  readonly spec: Json;
  readonly initial?: Json;
  /**
   * The Status message from the upstream source, used until a golden exists. Several errors are listed in the
   * server's order where that order is fixed.
   */
  readonly message: string;
}

const W = (name: string, detail: string) => `Widget.${GROUP} "${name}" is invalid: ${detail}`;
const G = (name: string, detail: string) => `Gadget.${GROUP} "${name}" is invalid: ${detail}`;

export const CASES: readonly Case[] = [
  {
    name: 'minimum',
    plural: 'widgets',
    spec: { size: 0 },
    message: W(
      'minimum',
      'spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1',
    ),
  },
  {
    name: 'maximum',
    plural: 'widgets',
    spec: { size: 11 },
    message: W(
      'maximum',
      'spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10',
    ),
  },
  {
    name: 'exclusive-minimum',
    plural: 'widgets',
    spec: { size: 1, ratio: 0 },
    message: W(
      'exclusive-minimum',
      'spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0',
    ),
  },
  {
    name: 'exclusive-maximum',
    plural: 'widgets',
    spec: { size: 1, ratio: 1.5 },
    message: W(
      'exclusive-maximum',
      'spec.ratio: Invalid value: 1.5: spec.ratio in body should be less than 1',
    ),
  },
  {
    name: 'multiple-of',
    plural: 'widgets',
    spec: { size: 1, step: 7 },
    message: W('multiple-of', 'spec.step: Invalid value: 7: spec.step in body should be a multiple of 5'),
  },
  {
    name: 'min-length',
    plural: 'widgets',
    spec: { size: 1, name: 'ab' },
    message: W(
      'min-length',
      'spec.name: Invalid value: "ab": spec.name in body should be at least 3 chars long',
    ),
  },
  {
    name: 'max-length',
    plural: 'widgets',
    spec: { size: 1, name: 'abcdefghij' },
    message: W('max-length', 'spec.name: Too long: may not be more than 8 bytes'),
  },
  {
    name: 'max-length-runes',
    plural: 'widgets',
    spec: { size: 1, title: 'ééééé' },
    message: W('max-length-runes', 'spec.title: Too long: may not be more than 4 bytes'),
  },
  {
    name: 'pattern',
    plural: 'widgets',
    spec: { size: 1, name: 'ABC' },
    message: W('pattern', `spec.name: Invalid value: "ABC": spec.name in body should match '^[a-z]+$'`),
  },
  {
    name: 'enum-string',
    plural: 'widgets',
    spec: { size: 1, mode: 'Medium' },
    message: W('enum-string', 'spec.mode: Unsupported value: "Medium": supported values: "Fast", "Slow"'),
  },
  {
    name: 'enum-integer',
    plural: 'widgets',
    spec: { size: 1, level: 4 },
    message: W('enum-integer', 'spec.level: Unsupported value: 4: supported values: "1", "2", "3"'),
  },
  {
    name: 'min-items',
    plural: 'widgets',
    spec: { size: 1, tags: [] },
    message: W('min-items', 'spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items'),
  },
  {
    name: 'max-items',
    plural: 'widgets',
    spec: { size: 1, tags: ['a', 'b', 'c', 'd'] },
    message: W('max-items', 'spec.tags: Too many: 4: must have at most 3 items'),
  },
  {
    name: 'list-set-duplicate',
    plural: 'widgets',
    spec: { size: 1, tags: ['a', 'a'] },
    message: W('list-set-duplicate', 'spec.tags[1]: Duplicate value: "a"'),
  },
  {
    name: 'list-map-duplicate',
    plural: 'widgets',
    spec: {
      size: 1,
      ports: [
        { name: 'http', port: 80 },
        { name: 'http', port: 8080 },
      ],
    },
    message: W(
      'list-map-duplicate',
      'spec.ports[1]: Duplicate value: map[string]interface {}{"name":"http"}',
    ),
  },
  {
    name: 'item-required',
    plural: 'widgets',
    spec: { size: 1, ports: [{ port: 80 }] },
    message: W('item-required', 'spec.ports[0].name: Required value'),
  },
  {
    name: 'item-maximum',
    plural: 'widgets',
    spec: { size: 1, ports: [{ name: 'x', port: 70000 }] },
    message: W(
      'item-maximum',
      'spec.ports[0].port: Invalid value: 70000: spec.ports[0].port in body should be less than or equal to 65535',
    ),
  },
  {
    name: 'min-properties',
    plural: 'widgets',
    spec: { size: 1, labels: {} },
    message: W(
      'min-properties',
      'spec.labels: Invalid value: 0: spec.labels in body should have at least 1 properties',
    ),
  },
  {
    name: 'max-properties',
    plural: 'widgets',
    spec: { size: 1, labels: { a: '1', b: '2', c: '3' } },
    message: W('max-properties', 'spec.labels: Too many: 3: must have at most 2 items'),
  },
  {
    name: 'additional-properties',
    plural: 'widgets',
    spec: { size: 1, labels: { a: 'toolong' } },
    message: W('additional-properties', 'spec.labels.a: Too long: may not be more than 5 bytes'),
  },
  {
    name: 'format-uri',
    plural: 'widgets',
    spec: { size: 1, url: 'not a uri' },
    message: W(
      'format-uri',
      'spec.url: Invalid value: "not a uri": spec.url in body must be of type uri: "not a uri"',
    ),
  },
  {
    name: 'format-ipv4',
    plural: 'widgets',
    spec: { size: 1, ip: '1.2.3' },
    message: W(
      'format-ipv4',
      'spec.ip: Invalid value: "1.2.3": spec.ip in body must be of type ipv4: "1.2.3"',
    ),
  },
  {
    name: 'format-date-time',
    plural: 'widgets',
    spec: { size: 1, when: 'yesterday' },
    message: W(
      'format-date-time',
      'spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"',
    ),
  },
  {
    name: 'format-uuid',
    plural: 'widgets',
    spec: { size: 1, id: 'xyz' },
    message: W('format-uuid', 'spec.id: Invalid value: "xyz": spec.id in body must be of type uuid: "xyz"'),
  },
  {
    name: 'required',
    plural: 'widgets',
    spec: { name: 'abc' },
    message: W('required', 'spec.size: Required value'),
  },
  {
    name: 'type-integer',
    plural: 'widgets',
    spec: { size: 'five' },
    message: W(
      'type-integer',
      'spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"',
    ),
  },
  {
    name: 'type-integer-float',
    plural: 'widgets',
    spec: { size: 2.5 },
    message: W(
      'type-integer-float',
      'spec.size: Invalid value: "number": spec.size in body must be of type integer: "number"',
    ),
  },
  {
    name: 'type-object',
    plural: 'widgets',
    spec: [],
    message: W('type-object', 'spec: Invalid value: "array": spec in body must be of type object: "array"'),
  },
  {
    name: 'int-or-string',
    plural: 'widgets',
    spec: { size: 1, port: true },
    message: W(
      'int-or-string',
      'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
    ),
  },
  {
    name: 'null-item',
    plural: 'widgets',
    spec: { size: 1, tags: [null] },
    message: W(
      'null-item',
      'spec.tags[0]: Invalid value: "null": spec.tags[0] in body must be of type string: "null"',
    ),
  },
  {
    name: 'one-of-none',
    plural: 'widgets',
    spec: { size: 1, choice: {} },
    message: W(
      'one-of-none',
      '[<nil>: Invalid value: "": "spec.choice" must validate one and only one schema (oneOf). Found none valid, spec.choice.a: Required value]',
    ),
  },
  {
    name: 'one-of-two',
    plural: 'widgets',
    spec: { size: 1, choice: { a: 'x', b: 'y' } },
    message: W(
      'one-of-two',
      '<nil>: Invalid value: "": "spec.choice" must validate one and only one schema (oneOf). Found 2 valid alternatives',
    ),
  },
  {
    name: 'any-of',
    plural: 'widgets',
    spec: { size: 1, prefixed: 'z' },
    message: W(
      'any-of',
      `[<nil>: Invalid value: "": "spec.prefixed" must validate at least one schema (anyOf), spec.prefixed: Invalid value: "z": spec.prefixed in body should match '^x']`,
    ),
  },
  {
    name: 'not',
    plural: 'widgets',
    spec: { size: 1, notForbidden: 'forbidden' },
    message: W('not', '<nil>: Invalid value: "": "spec.notForbidden" must not validate the schema (not)'),
  },
  {
    name: 'all-of',
    plural: 'widgets',
    spec: { size: 1, bounded: 0 },
    message: W(
      'all-of',
      '[spec.bounded: Invalid value: 0: spec.bounded in body should be greater than or equal to 1, <nil>: Invalid value: "": "spec.bounded" must validate all the schemas (allOf)]',
    ),
  },
  {
    name: 'two-errors',
    plural: 'widgets',
    spec: { size: 0, step: 3 },
    message: W(
      'two-errors',
      '[spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1, spec.step: Invalid value: 3: spec.step in body should be a multiple of 5]',
    ),
  },
  // CEL
  {
    name: 'cel-message',
    plural: 'gadgets',
    spec: { minReplicas: 3, maxReplicas: 2 },
    message: G('cel-message', 'spec: Invalid value: "object": minReplicas must not exceed maxReplicas'),
  },
  {
    name: 'cel-message-expression',
    plural: 'gadgets',
    spec: { mode: 'Locked', maxReplicas: 3 },
    message: G('cel-message-expression', 'spec: Invalid value: "object": Locked gadgets run 1 replica'),
  },
  {
    name: 'cel-field-path-reason',
    plural: 'gadgets',
    spec: { owner: 'bob' },
    message: G(
      'cel-field-path-reason',
      `spec.owner: Forbidden: failed rule: !has(self.owner) || self.owner.startsWith("team-")`,
    ),
  },
  {
    name: 'cel-macro-all',
    plural: 'gadgets',
    spec: { tags: ['ok', 'toolong'] },
    message: G('cel-macro-all', 'spec: Invalid value: "object": tags are at most 5 characters'),
  },
  {
    name: 'cel-regex',
    plural: 'gadgets',
    spec: { image: 'Nginx' },
    message: G('cel-regex', 'spec.image: Invalid value: "string": image must be name:tag'),
  },
  {
    name: 'cel-transition',
    plural: 'gadgets',
    initial: { image: 'nginx:1.0' },
    spec: { image: 'nginx:2.0' },
    message: G('cel-transition', 'spec.image: Invalid value: "string": image is immutable'),
  },
  {
    name: 'cel-transition-int',
    plural: 'gadgets',
    initial: { priority: 5 },
    spec: { priority: 4 },
    message: G('cel-transition-int', 'spec.priority: Invalid value: "integer": priority may only grow'),
  },
  {
    name: 'cel-url',
    plural: 'gadgets',
    spec: { endpoint: 'http://example.com' },
    message: G('cel-url', 'spec.endpoint: Invalid value: "string": endpoint must be an https URL'),
  },
  {
    name: 'cel-quantity',
    plural: 'gadgets',
    spec: { memory: '2Gi' },
    message: G('cel-quantity', 'spec.memory: Invalid value: "string": memory must be at most 1Gi'),
  },
  {
    name: 'cel-ip',
    plural: 'gadgets',
    spec: { addresses: ['10.0.0.1', '::1'] },
    message: G('cel-ip', 'spec.addresses: Invalid value: "array": addresses must be IPv4'),
  },
  {
    name: 'cel-lists',
    plural: 'gadgets',
    spec: { addresses: ['10.0.0.2', '10.0.0.1'] },
    message: G('cel-lists', 'spec.addresses: Invalid value: "array": addresses must be sorted'),
  },
  {
    name: 'cel-cidr',
    plural: 'gadgets',
    spec: { subnet: '10.0.0.0/8' },
    message: G('cel-cidr', 'spec.subnet: Invalid value: "string": subnet must be /16 or smaller'),
  },
  {
    name: 'cel-format',
    plural: 'gadgets',
    spec: { name: 'Not_A_Label' },
    message: G('cel-format', 'spec.name: Invalid value: "string": name must be a DNS label'),
  },
  {
    name: 'cel-blocked',
    plural: 'gadgets',
    spec: { minReplicas: 3, maxReplicas: 2, mode: 'x'.repeat(20) },
    message: G(
      'cel-blocked',
      '[spec.mode: Too long: may not be more than 16 bytes, <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]',
    ),
  },
];
