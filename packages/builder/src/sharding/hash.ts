/**
 * Rendezvous (highest-random-weight) hashing: a key belongs to the member whose hash of `(member, key)` is
 * highest. Every replica that knows the same member set computes the same owner without talking to the
 * others, and a join or leave moves only the keys that the joining member wins or the leaving member held
 * (about `1 / members` of them), never keys between two members that stay.
 */

/** 32-bit FNV-1a of a string's UTF-16 code units, seeded. */
function fnv1a(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** MurmurHash3's 32-bit finaliser: spreads every input bit over the output (FNV alone clusters on short suffixes). */
function fmix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * The weight of `member` for `key`: a 52-bit number, uniform for any inputs. Two 32-bit halves with
 * different seeds so that ties are practically impossible.
 */
export function rendezvousWeight(key: string, member: string): number {
  const s = `${member}\u0000${key}`;
  const hi = fmix32(fnv1a(s, 0x9e3779b9)) & 0xfffff;
  const lo = fmix32(fnv1a(s, 0x7f4a7c15));
  return hi * 0x1_0000_0000 + lo;
}

/**
 * The member that owns `key` among `members` (highest weight; a tie goes to the smaller identity), or
 * `undefined` when `members` is empty. Order of `members` does not matter.
 */
export function rendezvousOwner(key: string, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestW = -1;
  for (const m of members) {
    const w = rendezvousWeight(key, m);
    if (w > bestW || (w === bestW && best !== undefined && m < best)) {
      best = m;
      bestW = w;
    }
  }
  return best;
}
