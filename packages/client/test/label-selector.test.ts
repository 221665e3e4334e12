import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatFieldSelector,
  formatLabelSelector,
  matchesLabelRequirements,
  parseLabelSelector,
} from '../src/entries/apiutil.js';
import { SelectorParseError } from '../src/entries/errors.js';

describe('label selectors', () => {
  it('formats maps with sorted keys and LabelSelector objects', () => {
    expect(formatLabelSelector({ tier: 'web', app: 'a' })).toBe('app=a,tier=web');
    expect(
      formatLabelSelector({
        matchLabels: { app: 'a' },
        matchExpressions: [
          { key: 'env', operator: 'In', values: ['b', 'a'] },
          { key: 'legacy', operator: 'DoesNotExist' },
          { key: 'x', operator: 'Exists' },
        ],
      }),
    ).toBe('app=a,env in (a,b),!legacy,x');
    expect(() =>
      formatLabelSelector({ matchExpressions: [{ key: 'k', operator: 'In', values: [] }] }),
    ).toThrow(SelectorParseError);
  });

  it('a map or LabelSelector object with an invalid key or value is refused, never rewritten into other requirements (metav1.LabelSelectorAsSelector / labels.NewRequirement)', () => {
    // A value holding selector syntax (from a custom resource's spec, say) would otherwise turn into more
    // requirements on the wire: {app: 'web,!admin'} into app=web AND no admin label.
    const bad = [
      { app: 'web,!admin' },
      { app: 'a b' },
      { 'bad key': 'x' },
      { matchLabels: { app: 'web,tier=db' } },
      { matchLabels: { app: 'x'.repeat(64) } },
      { matchExpressions: [{ key: 'env', operator: 'In' as const, values: ['a,b'] }] },
      { matchExpressions: [{ key: 'env', operator: 'NotIn' as const, values: ['a)'] }] },
      { matchExpressions: [{ key: 'env!', operator: 'Exists' as const }] },
      { matchExpressions: [{ key: 'env', operator: 'Exists' as const, values: ['a'] }] },
      { matchExpressions: [{ key: 'env', operator: 'DoesNotExist' as const, values: ['a'] }] },
    ];
    for (const sel of bad)
      expect(() => formatLabelSelector(sel), JSON.stringify(sel)).toThrow(SelectorParseError);
    // valid ones still format
    expect(formatLabelSelector({ 'example.com/app': 'web-1', empty: '' })).toBe(
      'empty=,example.com/app=web-1',
    );
    expect(formatLabelSelector({ matchExpressions: [{ key: 'env', operator: 'Exists', values: [] }] })).toBe(
      'env',
    );
  });

  it('null is no selector; a number, boolean or array is refused as a SelectorParseError (not a TypeError)', () => {
    expect(formatLabelSelector(null as never)).toBe('');
    for (const bad of [5, true, ['app=web'], { app: 5 }, { matchLabels: { app: null } }])
      expect(() => formatLabelSelector(bad as never), JSON.stringify(bad)).toThrow(SelectorParseError);
  });

  it('percent-encodes selectors the way the API server decodes them (C19)', () => {
    const q = new URLSearchParams({ labelSelector: 'env in (a,b),tier!=web,!legacy' });
    expect(q.toString()).toBe('labelSelector=env+in+%28a%2Cb%29%2Ctier%21%3Dweb%2C%21legacy');
    expect(new URLSearchParams(q.toString()).get('labelSelector')).toBe('env in (a,b),tier!=web,!legacy');
  });

  it('parses and matches every operator; != and notin match objects lacking the key', () => {
    const reqs = parseLabelSelector('env in (a, b),tier!=web,!legacy,app,n>3');
    expect(reqs.map((r) => r.operator)).toEqual(['in', 'notin', '!', 'exists', 'gt']);
    expect(matchesLabelRequirements(reqs, { env: 'a', app: 'x', n: '4' })).toBe(true);
    expect(matchesLabelRequirements(reqs, { env: 'a', app: 'x', n: '4', tier: 'web' })).toBe(false);
    expect(matchesLabelRequirements(reqs, { env: 'c', app: 'x', n: '4' })).toBe(false);
    expect(matchesLabelRequirements(reqs, { env: 'a', app: 'x', n: '4', legacy: '' })).toBe(false);
    expect(matchesLabelRequirements(reqs, { env: 'a', n: '4' })).toBe(false);
    expect(matchesLabelRequirements(parseLabelSelector(''), undefined)).toBe(true);
  });

  it('rejects malformed selectors', () => {
    for (const bad of ['env in ()', 'env in (a', 'a=b,', '=x', 'n>z']) {
      expect(() => parseLabelSelector(bad), bad).toThrow(SelectorParseError);
    }
  });

  it('property: formatting an equality map and parsing it back matches exactly that map', () => {
    const key = fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/);
    const val = fc.stringMatching(/^[a-z0-9]{0,5}$/);
    fc.assert(
      fc.property(fc.dictionary(key, val, { minKeys: 1 }), (labels) => {
        const reqs = parseLabelSelector(formatLabelSelector(labels));
        expect(matchesLabelRequirements(reqs, labels)).toBe(true);
        const [k] = Object.keys(labels);
        expect(matchesLabelRequirements(reqs, { ...labels, [k!]: `${labels[k!]}-other` })).toBe(false);
      }),
    );
  });

  it('escapes field selector values', () => {
    expect(formatFieldSelector({ 'metadata.name': 'a,b=c\\d', 'spec.nodeName': '' })).toBe(
      'metadata.name=a\\,b\\=c\\\\d,spec.nodeName=',
    );
  });
});
