import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  escapeFieldValue,
  fieldRequirementsOf,
  formatFieldSelector,
  matchesFieldRequirements,
  parseFieldSelector,
} from '../src/entries/apiutil.js';
import { SelectorParseError } from '../src/entries/errors.js';

describe('parseFieldSelector (the one field-selector parser)', () => {
  it('reads an escaped value containing , and = back as the value the client formatted', () => {
    const wire = formatFieldSelector({ 'metadata.name': 'a,b=c\\d', 'spec.nodeName': 'n1' });
    expect(parseFieldSelector(wire)).toEqual([
      { field: 'metadata.name', operator: '=', value: 'a,b=c\\d' },
      { field: 'spec.nodeName', operator: '=', value: 'n1' },
    ]);
  });

  it('knows =, == and != and splits at the first operator', () => {
    expect(parseFieldSelector('a==1,b!=2,c=x\\=y')).toEqual([
      { field: 'a', operator: '==', value: '1' },
      { field: 'b', operator: '!=', value: '2' },
      { field: 'c', operator: '=', value: 'x=y' },
    ]);
    expect(parseFieldSelector('  ')).toEqual([]);
  });

  it('null is no selector; a map with a non-string value or a field holding selector syntax, or a number, is refused as a SelectorParseError (not a TypeError)', () => {
    // JSON null (a custom resource's spec.fieldSelector: null) means "none", as an absent option does.
    expect(formatFieldSelector(null as never)).toBe('');
    expect(fieldRequirementsOf(null as never)).toEqual([]);
    for (const bad of [
      5,
      true,
      { 'metadata.name': 5 },
      { 'metadata.name': null },
      { 'metadata.name=x,metadata.namespace': 'y' },
      { 'spec.nodeName!': 'n1' },
      { '': 'x' },
    ]) {
      expect(() => formatFieldSelector(bad as never), JSON.stringify(bad)).toThrow(SelectorParseError);
      expect(() => fieldRequirementsOf(bad as never), JSON.stringify(bad)).toThrow(SelectorParseError);
    }
  });

  it('refuses a term without operator, and an invalid escape, naming the term', () => {
    expect(() => parseFieldSelector('metadata.name')).toThrow(SelectorParseError);
    expect(() => parseFieldSelector('a=b\\x')).toThrow(/"a=b\\\\x".*escape/);
  });

  it('round-trips any equality map through the wire form (property)', () => {
    const field = fc.stringMatching(/^[a-z][a-z.]{0,10}$/);
    fc.assert(
      fc.property(fc.dictionary(field, fc.string({ maxLength: 12 })), (m) => {
        expect(parseFieldSelector(formatFieldSelector(m))).toEqual(fieldRequirementsOf(m));
      }),
    );
  });

  it('matches requirements against field values; a missing field only satisfies !=', () => {
    const reqs = parseFieldSelector(`metadata.name=${escapeFieldValue('x,y')},status.phase!=Failed`);
    const obj: Record<string, string> = { 'metadata.name': 'x,y', 'status.phase': 'Running' };
    expect(matchesFieldRequirements(reqs, (f) => obj[f])).toBe(true);
    expect(matchesFieldRequirements(reqs, (f) => ({ ...obj, 'status.phase': 'Failed' })[f])).toBe(false);
    expect(matchesFieldRequirements(parseFieldSelector('a!=1'), () => undefined)).toBe(true);
  });
});
