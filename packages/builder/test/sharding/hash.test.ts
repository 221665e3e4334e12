import { describe, expect, it } from 'vitest';
import { rendezvousOwner, rendezvousWeight } from '../../src/sharding/hash.js';

const keys = Array.from({ length: 3000 }, (_, i) => `ns-${i % 17}/widget-${i}`);

function counts(members: readonly string[]): Map<string, number> {
  const c = new Map<string, number>(members.map((m) => [m, 0]));
  for (const k of keys) {
    const o = rendezvousOwner(k, members) as string;
    c.set(o, (c.get(o) ?? 0) + 1);
  }
  return c;
}

describe('rendezvous hashing', () => {
  it('spreads 3,000 keys over 3 members with max/mean <= 1.2', () => {
    const c = counts(['replica-a', 'replica-b', 'replica-c']);
    const values = [...c.values()];
    const mean = keys.length / 3;
    const spread = Math.max(...values) / mean;
    console.log(`spread max/mean over 3 members: ${spread.toFixed(3)} (${values.join(' / ')})`);
    expect(spread).toBeLessThanOrEqual(1.2);
    expect(Math.min(...values)).toBeGreaterThan(0);
  });

  it('spreads evenly for generated identities too (hostname-random names)', () => {
    for (const members of [
      ['pod-counter-7d9f-x1a2b3c4', 'pod-counter-7d9f-x9e8d7c6', 'pod-counter-7d9f-x00000001'],
      ['a', 'b', 'c', 'd'],
    ]) {
      const values = [...counts(members).values()];
      expect(Math.max(...values) / (keys.length / members.length)).toBeLessThanOrEqual(1.2);
    }
  });

  it('is independent of member order and deterministic', () => {
    for (const k of keys.slice(0, 200)) {
      expect(rendezvousOwner(k, ['a', 'b', 'c'])).toBe(rendezvousOwner(k, ['c', 'a', 'b']));
    }
    expect(rendezvousWeight('k', 'm')).toBe(rendezvousWeight('k', 'm'));
    expect(rendezvousOwner('k', [])).toBeUndefined();
  });

  it('moves only the keys the joining member wins on a join (about 1/4), none between staying members', () => {
    const before = ['a', 'b', 'c'];
    const after = ['a', 'b', 'c', 'd'];
    let moved = 0;
    for (const k of keys) {
      const o1 = rendezvousOwner(k, before);
      const o2 = rendezvousOwner(k, after);
      if (o1 !== o2) {
        moved++;
        expect(o2).toBe('d');
      }
    }
    console.log(`join moved ${moved} of ${keys.length} keys (ideal ${keys.length / 4})`);
    expect(moved / keys.length).toBeGreaterThan(0.2);
    expect(moved / keys.length).toBeLessThan(0.3);
  });

  it("moves only the leaving member's keys on a leave", () => {
    const before = ['a', 'b', 'c', 'd'];
    const after = ['a', 'c', 'd'];
    let moved = 0;
    for (const k of keys) {
      const o1 = rendezvousOwner(k, before);
      const o2 = rendezvousOwner(k, after);
      if (o1 !== o2) {
        moved++;
        expect(o1).toBe('b');
      } else expect(o1).not.toBe('b');
    }
    expect(moved).toBe([...counts(before)].find(([m]) => m === 'b')?.[1]);
  });
});
