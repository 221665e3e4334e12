// The client's and envtest's label-selector parsers stay separate (envtest must not share code with
// the client it tests), so a differential property test keeps them in agreement: on random selectors and
// label sets both accept or both reject, and when they accept they select the same label sets.
import { matchesLabelRequirements, parseLabelSelector } from '@kubeloop/client/apiutil';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseLabelSelector as envtestParse } from '../../../packages/envtest/src/label-selector.js';

const keys = fc.constantFrom(
  'app',
  'tier',
  'example.com/team',
  'x',
  'a-b',
  'A.b_c',
  '-bad',
  'bad/',
  'a/b/c',
  '',
);
const values = fc.constantFrom('web', 'db', '1', '10', '', 'v_1.2-3', '-x', 'a b', 'ü');
const op = fc.constantFrom('=', '==', '!=', ' in ', ' notin ', '', '!', ' gt ', ' lt ', '=!', ' in');
const term = fc.tuple(keys, op, fc.array(values, { minLength: 0, maxLength: 3 })).map(([k, o, vs]) => {
  if (o === '') return k;
  if (o === '!') return `!${k}`;
  if (o.trim() === 'in' || o.trim() === 'notin') return `${k}${o}(${vs.join(',')})`;
  return `${k}${o}${vs[0] ?? ''}`;
});
const selector = fc.array(term, { minLength: 0, maxLength: 4 }).map((ts) => ts.join(','));
const labelSet = fc.dictionary(
  fc.constantFrom('app', 'tier', 'example.com/team', 'x'),
  fc.constantFrom('web', 'db', '1', '10', ''),
);

function clientSide(sel: string) {
  try {
    const reqs = parseLabelSelector(sel);
    return { ok: true as const, matches: (l: Record<string, string>) => matchesLabelRequirements(reqs, l) };
  } catch {
    return { ok: false as const };
  }
}

function envtestSide(sel: string) {
  try {
    const s = envtestParse(sel);
    return { ok: true as const, matches: (l: Record<string, string>) => s.matches(l) };
  } catch {
    return { ok: false as const };
  }
}

describe('label selectors: client parser vs envtest parser (differential)', () => {
  it('agree on accept/reject and on which label sets match', () => {
    fc.assert(
      fc.property(selector, fc.array(labelSet, { maxLength: 5 }), (sel, sets) => {
        const c = clientSide(sel);
        const e = envtestSide(sel);
        expect({ selector: sel, accepted: c.ok }).toEqual({ selector: sel, accepted: e.ok });
        if (c.ok && e.ok) {
          for (const l of sets)
            expect({ sel, l, match: c.matches(l) }).toEqual({ sel, l, match: e.matches(l) });
        }
      }),
      { numRuns: 2000 },
    );
  });
});
