import type { FakeClock } from '@kubeloop/core/testing';
import { rendezvousOwner } from '../../src/sharding/hash.js';
import { type MemberRecord, ShardState, type ShardTimings } from '../../src/sharding/state.js';

/** A fake API server holding member Leases: write bumps the version, list returns them all. */
export class Leases {
  readonly records = new Map<string, MemberRecord>();
  #rv = 0;
  write(id: string, drainedFor: readonly string[] | undefined): void {
    this.records.set(id, { identity: id, version: String(++this.#rv), drainedFor });
  }
  list(): MemberRecord[] {
    return [...this.records.values()];
  }
}

/** One tick of the Sharding runnable against `leases`: write the acknowledgement, then read. */
export function tick(s: ShardState, leases: Leases, clock: FakeClock, ok = true): void {
  s.checkFence();
  const ack = s.ackToWrite();
  s.writeStarted(ack);
  if (ok) {
    leases.write(s.self, ack);
    s.writeSucceeded(clock.now(), ack);
    s.observeMembers(leases.list());
  } else {
    s.writeFailed();
    s.expire();
  }
  s.checkFence();
}

/** A key that `owner` owns under `members`. */
export function keyOwnedBy(
  owner: string,
  members: readonly string[],
  not?: { owner: string; members: readonly string[] },
): string {
  for (let i = 0; ; i++) {
    const k = `ns/obj-${i}`;
    if (rendezvousOwner(k, members) !== owner) continue;
    if (not && rendezvousOwner(k, not.members) === not.owner) continue;
    return k;
  }
}

/** The first `n` keys that `owner` owns under `members`. */
export function keysOwnedBy(owner: string, members: readonly string[], n: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) {
    const k = `ns/obj-${i}`;
    if (rendezvousOwner(k, members) === owner) out.push(k);
  }
  return out;
}

/** Two replicas `a` and `b` ticked until both serve the view [a, b]. */
export function servingPair(
  clock: FakeClock,
  timings: ShardTimings,
): { leases: Leases; a: ShardState; b: ShardState } {
  const leases = new Leases();
  const a = new ShardState('a', clock, timings);
  const b = new ShardState('b', clock, timings);
  for (let i = 0; i < 3; i++) {
    tick(a, leases, clock);
    tick(b, leases, clock);
  }
  return { leases, a, b };
}
