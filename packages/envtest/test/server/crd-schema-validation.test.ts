/**
 * A CRD kube-apiserver 1.32 refuses is refused by envtest with the server's field paths and messages: a
 * non-structural schema (a property without `type`, an array without `items`), `uniqueItems`, a pattern Go's
 * regexp cannot compile, and a CEL rule that does not compile (undefined field, operator applied to the wrong
 * types, not a bool) — the last with cel-go's `ERROR: <input>:line:col: …` text, the snippet and the caret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crd, type Json } from '../support/cr-validation-cases.js';
import { startTestServer, type TestServer } from './helpers.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const PREFIX = 'CustomResourceDefinition.apiextensions.k8s.io "things.envval.kubeloop.dev" is invalid: ';
// one version: the server reports the schema hoisted to spec.validation (checked against kube-apiserver 1.32.13)
const AT = 'spec.validation.openAPIV3Schema';
const withSpec = (spec: Json) => crd('things', 'Thing', { type: 'object', properties: { spec } });
const rule = (r: string) =>
  `apiextensions.ValidationRule{Rule:"${r}", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}`;

describe('CRD schemas refused at creation', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  const cases: [string, Json, string][] = [
    [
      'a property without a type',
      withSpec({ type: 'object', properties: { size: { minimum: 1 } } }),
      `${AT}.properties[spec].properties[size].type: Required value: must not be empty for specified object fields`,
    ],
    [
      'an array without items',
      withSpec({ type: 'object', properties: { tags: { type: 'array' } } }),
      `${AT}.properties[spec].properties[tags].items: Required value: must be specified`,
    ],
    [
      'uniqueItems',
      withSpec({
        type: 'object',
        properties: { tags: { type: 'array', uniqueItems: true, items: { type: 'string' } } },
      }),
      `${AT}.properties[spec].properties[tags].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
    ],
    [
      'a pattern that is not RE2',
      withSpec({ type: 'object', properties: { name: { type: 'string', pattern: '^a(?=b)' } } }),
      `${AT}.properties[spec].properties[name].pattern: Invalid value: "^a(?=b)": must be a valid regular expression, but isn't: error parsing regexp: invalid or unsupported Perl syntax: \`(?=\``,
    ],
    [
      'a rule naming an undefined field',
      withSpec({
        type: 'object',
        properties: { size: { type: 'integer' } },
        'x-kubernetes-validations': [{ rule: 'self.nope > 0' }],
      }),
      `${AT}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: ${rule('self.nope > 0')}: compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope > 0\n | ....^`,
    ],
    [
      'a rule comparing an int with a string',
      withSpec({
        type: 'object',
        properties: { size: { type: 'integer' } },
        'x-kubernetes-validations': [{ rule: "self.size > 'a'" }],
      }),
      `${AT}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: ${rule("self.size > 'a'")}: compilation failed: ERROR: <input>:1:11: found no matching overload for '_>_' applied to '(int, string)'\n | self.size > 'a'\n | ..........^`,
    ],
    [
      'a rule that is not a bool',
      withSpec({
        type: 'object',
        properties: { size: { type: 'integer' } },
        'x-kubernetes-validations': [{ rule: 'self.size + 1' }],
      }),
      `${AT}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: ${rule('self.size + 1')}: cel expression must evaluate to a bool`,
    ],
  ];
  for (const [what, body, detail] of cases)
    it(`refuses ${what}`, async () => {
      const r = await t.req('POST', CRDS, body);
      expect(r.status).toBe(422);
      expect(r.body.message).toBe(`${PREFIX}${detail}`);
      expect(r.body.details.causes[0].field).toBe(detail.slice(0, detail.indexOf(': ')));
    });

  it('accepts int-or-string and preserve-unknown-fields nodes without a type, and rules that compile', async () => {
    const body = withSpec({
      type: 'object',
      properties: {
        port: { 'x-kubernetes-int-or-string': true },
        extra: { 'x-kubernetes-preserve-unknown-fields': true },
      },
      'x-kubernetes-validations': [
        { rule: 'has(self.port)', messageExpression: "'port ' + string(self.port)" },
      ],
    });
    const r = await t.req('POST', CRDS, body);
    expect(r.status).toBe(201);
  });
});
