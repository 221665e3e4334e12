import { describe, expect, it } from 'vitest';
import {
  type FieldRequirement,
  fieldRequirementsOf,
  formatFieldSelector,
  parseFieldSelector,
} from '../src/entries/apiutil.js';
import { SelectorParseError } from '../src/entries/errors.js';

/**
 * Differential table against apimachinery `fields.ParseSelector` (pkg/fields/selector.go: splitTerms,
 * splitTerm, UnescapeValue). Each row is an input and what upstream does with it: the requirements it yields
 * (as field, operator, unescaped value) or `'error'`. Breaker report item 11: empty terms were refused here but
 * skipped upstream, and an unescaped `=` in a value was accepted here but refused upstream — so a selector
 * worked live and failed from the cache, or the other way round.
 */
type Row = readonly [input: string, upstream: ReadonlyArray<readonly [string, string, string]> | 'error'];

const TABLE: readonly Row[] = [
  // empty terms are skipped
  ['metadata.name=a,', [['metadata.name', '=', 'a']]],
  [',metadata.name=a', [['metadata.name', '=', 'a']]],
  [
    'a=1,,b=2',
    [
      ['a', '=', '1'],
      ['b', '=', '2'],
    ],
  ],
  [',', []],
  ['', []],
  // operators: the first !=, == or = from the left, in that order of preference at one position
  ['a==1', [['a', '==', '1']]],
  ['a!=1', [['a', '!=', '1']]],
  ['a=', [['a', '=', '']]],
  ['a!=', [['a', '!=', '']]],
  ['a!b=c', [['a!b', '=', 'c']]],
  // the field is taken as written: no escapes, no trimming, may be empty
  ['=x', [['', '=', 'x']]],
  ['a\\,b=c', [['a\\,b', '=', 'c']]],
  ['a =b', [['a ', '=', 'b']]],
  // an escape in the field is not one: the split is at the first = (and the rest then has an unescaped =)
  ['a\\=b=c', 'error'],
  // an unescaped = in the value is refused, an escaped one kept
  ['metadata.name=a=b', 'error'],
  ['a===b', 'error'],
  ['a!==b', 'error'],
  ['metadata.name=a\\=b', [['metadata.name', '=', 'a=b']]],
  ['a=x\\,y', [['a', '=', 'x,y']]],
  ['a=x\\\\', [['a', '=', 'x\\']]],
  // invalid escapes
  ['a=b\\x', 'error'],
  ['a=b\\', 'error'],
  // no operator
  ['metadata.name', 'error'],
  ['a=1,b', 'error'],
  ['a in (x)', 'error'],
  ['a', 'error'],
];

describe('parseFieldSelector matches apimachinery fields.ParseSelector (differential table)', () => {
  for (const [input, upstream] of TABLE) {
    it(`${JSON.stringify(input)} → ${upstream === 'error' ? 'error' : JSON.stringify(upstream)}`, () => {
      if (upstream === 'error') {
        expect(() => parseFieldSelector(input)).toThrow(SelectorParseError);
        return;
      }
      const want: FieldRequirement[] = upstream.map(([field, operator, value]) => ({
        field,
        operator: operator as FieldRequirement['operator'],
        value,
      }));
      expect(parseFieldSelector(input)).toEqual(want);
    });
  }

  it('names the term and the unescaped = in the message', () => {
    expect(() => parseFieldSelector('metadata.name=a=b')).toThrow(/"metadata.name=a=b".*unescaped "="/);
  });
});

describe('fieldRequirementsOf reads what formatFieldSelector sends', () => {
  it('a string selector is trimmed as on the wire; map values keep their spaces', () => {
    expect(fieldRequirementsOf(' metadata.name=a ')).toEqual([
      { field: 'metadata.name', operator: '=', value: 'a' },
    ]);
    expect(parseFieldSelector(formatFieldSelector({ a: ' ' }))).toEqual([
      { field: 'a', operator: '=', value: ' ' },
    ]);
  });
});
