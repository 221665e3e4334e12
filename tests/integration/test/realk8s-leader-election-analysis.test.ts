// The figures of scripts/realk8s-leader-election.mjs (leader election and sharding on a real control plane) are
// computed from made-up Lease write histories here, so a broken analysis cannot report "max leaders 1" on a run
// that had two: overlapping terms, a failover time, sharding ownership and a reconcile outside it.
import { fileURLToPath, pathToFileURL } from 'node:url';
import { rendezvousOwner } from '@kubeloop/builder/sharding';
import { describe, expect, it } from 'vitest';

interface Interval {
  start: number;
  end: number;
}
interface Write {
  type: string;
  name: string;
  holder: string;
  acquireTime?: number;
  renewTime?: number;
  drainedFor?: string;
  /** When the history watch received it (the server took it); `renewTime` when absent. */
  at?: number;
}
interface Term extends Interval {
  holder: string;
  lastRenew: number;
}
interface Claim extends Interval {
  id: string;
}
interface Replica {
  name: string;
  group: 'le' | 'sh';
  events: { kind: string; at: number; key?: string }[];
}
interface Round {
  kind: string;
  i: number;
  start: number;
  end: number;
  leHolder: string;
  leAcquire: number;
  shardVictim?: string;
}
interface Analysis {
  safe: boolean;
  le: {
    maxLeaders: number;
    maxProcessLeaders: number;
    byKind: Record<string, { failovers: number[]; kept: number }>;
  };
  sh: {
    maxOwners: number;
    outsideOwnership: number;
    conflicting: number;
    byKind: Record<string, { handovers: number[]; kept: number }>;
  };
}
interface AnalyseModule {
  maxOverlap(xs: Interval[]): number;
  percentile(xs: number[], p: number): number | undefined;
  leaderTerms(h: Write[], name: string, renewMs: number): Term[];
  ownership(h: Write[], shardName: string, keys: string[], t: typeof T): Map<string, Claim[]>;
  analyse(input: {
    history: Write[];
    replicas: Replica[];
    rounds: Round[];
    T: typeof T;
    leName: string;
    shardName: string;
    keys: string[];
  }): Analysis;
}

const file = fileURLToPath(new URL('../../../scripts/realk8s-leader-election/analyse.mjs', import.meta.url));
const m = (await import(pathToFileURL(file).href)) as AnalyseModule;
const T = { leaseMs: 8000, renewMs: 6000, retryMs: 1000 };
const le = (holder: string, acquireTime: number, renewTime: number): Write => ({
  type: 'MODIFIED',
  name: 'pod-counter',
  holder,
  acquireTime,
  renewTime,
});

describe('realk8s leader election analysis', () => {
  it('overlap counts touching intervals once and nested ones twice; percentiles are nearest-rank', () => {
    expect(
      m.maxOverlap([
        { start: 0, end: 10 },
        { start: 10, end: 20 },
      ]),
    ).toBe(1);
    expect(
      m.maxOverlap([
        { start: 0, end: 10 },
        { start: 5, end: 6 },
        { start: 9, end: 30 },
      ]),
    ).toBe(2);
    expect(m.percentile([5, 1, 3], 50)).toBe(3);
    expect(m.percentile([5, 1, 3], 99)).toBe(5);
    expect(m.percentile([], 50)).toBeUndefined();
  });

  it('a term lasts to its last renew + the renew deadline; the failover runs from that last renew to the next acquire', () => {
    const history = [
      le('a', 0, 0),
      le('a', 0, 1000),
      le('a', 0, 2000),
      le('b', 10_500, 10_500),
      le('b', 10_500, 11_500),
    ];
    const terms = m.leaderTerms(history, 'pod-counter', T.renewMs);
    expect(terms.map((t) => [t.holder, t.start, t.end])).toEqual([
      ['a', 0, 8000],
      ['b', 10_500, 17_500],
    ]);
    const r = m.analyse({
      history,
      replicas: [],
      rounds: [{ kind: 'partition', i: 0, start: 2500, end: 11_000, leHolder: 'a', leAcquire: 0 }],
      T,
      leName: 'pod-counter',
      shardName: 'pod-counter',
      keys: [],
    });
    expect(r.le.maxLeaders).toBe(1);
    expect(r.le.byKind.partition?.failovers).toEqual([8500]);
    expect(r.safe).toBe(true);
  });

  it('a new term that begins before the old one’s renew deadline has passed is two leaders at once, and the run is unsafe', () => {
    const history = [le('a', 0, 0), le('a', 0, 4000), le('b', 9000, 9000)];
    const r = m.analyse({
      history,
      replicas: [],
      rounds: [],
      T,
      leName: 'pod-counter',
      shardName: 'x',
      keys: [],
    });
    expect(r.le.maxLeaders).toBe(2);
    expect(r.safe).toBe(false);
  });

  it('the processes’ own view counts leaders from "became leader" to "stopped leading" or exit', () => {
    const replicas: Replica[] = [
      {
        name: 'le-r0',
        group: 'le',
        events: [
          { kind: 'leader', at: 0 },
          { kind: 'lost', at: 5000 },
        ],
      },
      {
        name: 'le-r1',
        group: 'le',
        events: [
          { kind: 'leader', at: 4000 },
          { kind: 'exit', at: 9000 },
        ],
      },
    ];
    const r = m.analyse({
      history: [],
      replicas,
      rounds: [],
      T,
      leName: 'pod-counter',
      shardName: 'x',
      keys: [],
    });
    expect(r.le.maxProcessLeaders).toBe(2);
    expect(r.safe).toBe(false);
  });

  it('sharding: a key moves to the joining member only after the old owner drops it; a silent owner is waited for a lease duration; a reconcile outside ownership is counted', () => {
    const a = 'sh-r0-aaaa';
    const b = 'sh-r1-bbbb';
    const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
    const moved = keys.find((k) => rendezvousOwner(k, [a, b]) === b) as string;
    const kept = keys.find((k) => rendezvousOwner(k, [a, b]) === a) as string;
    const w = (id: string, at: number, ack: string[]): Write => ({
      type: 'MODIFIED',
      name: `pod-counter-shard-${id}`,
      holder: id,
      renewTime: at,
      drainedFor: ack.join(','),
    });
    const history = [
      w(a, 0, [a]),
      w(a, 1000, [a]),
      w(b, 1500, [a, b]), // b claims its keys while a still does
      w(a, 2000, [a, b]), // a drained and dropped them
      w(b, 2500, [a, b]),
      w(a, 3000, [a, b]), // a's last renew: then it is partitioned
      // b renews, still counting a live until a's lease duration has passed since a's last write
      ...[4500, 6500, 8500, 10_500].map((at) => w(b, at, [a, b])),
      w(b, 11_500, [b]), // b, a lease duration later, takes a's keys
      w(b, 12_000, [b]),
    ];
    const own = m.ownership(history, 'pod-counter', keys, T);
    const ownersOf = (k: string) => (own.get(k) ?? []).map((c) => [c.id, c.start, c.end]);
    expect(ownersOf(moved)).toEqual([
      [a, 0, 2000],
      [b, 2000, 18_000],
    ]);
    expect(ownersOf(kept)).toEqual([
      [a, 0, 9000],
      [b, 11_500, 18_000],
    ]);
    const replicas: Replica[] = [
      { name: 'sh-r0', group: 'sh', events: [{ kind: 'reconcile', at: 500, key: kept }] },
      { name: 'sh-r1', group: 'sh', events: [{ kind: 'reconcile', at: 1800, key: moved }] },
    ];
    const r = m.analyse({
      history,
      replicas,
      rounds: [
        {
          kind: 'partition',
          i: 0,
          start: 3500,
          end: 12_000,
          leHolder: '',
          leAcquire: 0,
          shardVictim: 'sh-r0',
        },
      ],
      T,
      leName: 'pod-counter',
      shardName: 'pod-counter',
      keys,
    });
    expect(r.sh.maxOwners).toBe(1);
    // b reconciled `moved` at 1800, before a had dropped it (2000)
    expect(r.sh.outsideOwnership).toBe(1);
    expect(r.sh.conflicting).toBe(1);
    expect(r.safe).toBe(false);
    expect(r.sh.byKind.partition?.handovers).toEqual([11_500 - 3000]);
  });
  it('a round whose fault the leader rode out has no failover: the next round’s failover is not counted for it', () => {
    // a leads through a server restart (its renews resume within the renew deadline); the partition round that
    // follows ends its term and b takes over. Only the partition round has a failover.
    const renews = [0, 1000, 2000, 3000, 4000, 5000, 8000, 9000, 10_000, 11_000, 12_000, 13_000, 14_000];
    const history = [...renews.map((t) => le('a', 0, t)), le('b', 23_000, 23_000), le('b', 23_000, 24_000)];
    const r = m.analyse({
      history,
      replicas: [],
      rounds: [
        { kind: 'restart', i: 0, start: 5500, end: 7500, leHolder: 'a', leAcquire: 0 },
        { kind: 'partition', i: 0, start: 14_500, end: 23_500, leHolder: 'a', leAcquire: 0 },
      ],
      T,
      leName: 'pod-counter',
      shardName: 'pod-counter',
      keys: [],
    });
    expect(r.le.byKind.restart?.failovers).toEqual([]);
    expect(r.le.byKind.restart?.kept).toBe(1);
    expect(r.le.byKind.partition?.failovers).toEqual([23_000 - 14_000]);
  });

  it('sharding: a member that keeps its keys through a round has no hand-over in it, however soon the next round moves them', () => {
    const a = 'sh-r0-aaaa';
    const b = 'sh-r1-bbbb';
    const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
    const w = (id: string, at: number, ack: string[]): Write => ({
      type: 'MODIFIED',
      name: `pod-counter-shard-${id}`,
      holder: id,
      renewTime: at,
      drainedFor: ack.join(','),
    });
    // both renew every second except during the restart (5000-7500: a gap shorter than the renew deadline);
    // a is partitioned after 14_000 and b takes its keys a lease duration later
    const beat = [0, 1000, 2000, 3000, 4000, 5000, 8000, 9000, 10_000, 11_000, 12_000, 13_000, 14_000];
    const history = [
      ...beat.flatMap((t) => [w(a, t, [a, b]), w(b, t + 100, [a, b])]),
      ...[15_100, 16_100, 17_100, 18_100, 19_100, 20_100, 21_100].map((t) => w(b, t, [a, b])),
      w(b, 22_100, [b]),
      w(b, 23_100, [b]),
    ];
    const r = m.analyse({
      history,
      replicas: [],
      rounds: [
        { kind: 'restart', i: 0, start: 5500, end: 7500, leHolder: '', leAcquire: 0 },
        {
          kind: 'partition',
          i: 0,
          start: 14_500,
          end: 23_500,
          leHolder: '',
          leAcquire: 0,
          shardVictim: 'sh-r0',
        },
      ],
      T,
      leName: 'pod-counter',
      shardName: 'pod-counter',
      keys,
    });
    expect(r.sh.byKind.restart?.handovers).toEqual([]);
    expect(r.sh.byKind.restart?.kept).toBe(1);
    expect(r.sh.byKind.partition?.handovers).toEqual([22_100 - 14_000]);
  });

  it('sharding: a renew the server took only after the new owner read the Leases (sent into a partition, delivered at the heal) does not delay the new owner', () => {
    // a is partitioned after its renew at 10_000; the renew it sends at 11_000 times out on its side (so it
    // fences at 16_000) but reaches the server at the heal (25_000). b could only see a's Lease unchanged since
    // 10_000: it takes a's keys a lease duration later (18_200) and reconciles one (18_600). Not outside its
    // ownership, and no two owners: a's claim ended at its renew deadline.
    const a = 'sh-r0-aaaa';
    const b = 'sh-r1-bbbb';
    const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
    const moved = keys.find((k) => rendezvousOwner(k, [a, b]) === a) as string;
    const w = (id: string, renewTime: number, ack: string[], at = renewTime + 10): Write => ({
      type: 'MODIFIED',
      name: `pod-counter-shard-${id}`,
      holder: id,
      renewTime,
      at,
      drainedFor: ack.join(','),
    });
    const history = [
      ...[0, 2000, 4000, 6000, 8000, 10_000].flatMap((t) => [w(a, t, [a, b]), w(b, t + 500, [a, b])]),
      ...[12_500, 14_500, 16_500].map((t) => w(b, t, [a, b])),
      w(b, 18_200, [b]),
      w(b, 20_200, [b]),
      w(a, 11_000, [a, b], 25_000),
    ];
    const own = m.ownership(history, 'pod-counter', keys, T);
    expect((own.get(moved) ?? []).map((c) => [c.id, c.start, c.end])).toEqual([
      [a, 0, 17_000],
      [b, 18_200, 26_200],
    ]);
    const r = m.analyse({
      history,
      replicas: [{ name: 'sh-r1', group: 'sh', events: [{ kind: 'reconcile', at: 18_600, key: moved }] }],
      rounds: [],
      T,
      leName: 'pod-counter',
      shardName: 'pod-counter',
      keys,
    });
    expect(r.sh.outsideOwnership).toBe(0);
    expect(r.sh.conflicting).toBe(0);
    expect(r.sh.maxOwners).toBe(1);
  });

  it('sharding: a new owner that acts before the old owner’s last renew it could see has expired is outside its ownership', () => {
    // the same history, but a's renew at 11_000 reached the server at once: b's Lease reads showed it, so b
    // had to wait until 19_000
    const a = 'sh-r0-aaaa';
    const b = 'sh-r1-bbbb';
    const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
    const moved = keys.find((k) => rendezvousOwner(k, [a, b]) === a) as string;
    const w = (id: string, renewTime: number, ack: string[]): Write => ({
      type: 'MODIFIED',
      name: `pod-counter-shard-${id}`,
      holder: id,
      renewTime,
      at: renewTime + 10,
      drainedFor: ack.join(','),
    });
    const history = [
      ...[0, 2000, 4000, 6000, 8000, 10_000].flatMap((t) => [w(a, t, [a, b]), w(b, t + 500, [a, b])]),
      w(a, 11_000, [a, b]),
      ...[12_500, 14_500, 16_500].map((t) => w(b, t, [a, b])),
      w(b, 18_200, [b]),
      w(b, 20_200, [b]),
    ];
    const own = m.ownership(history, 'pod-counter', keys, T);
    expect((own.get(moved) ?? []).map((c) => [c.id, c.start, c.end])).toEqual([
      [a, 0, 17_000],
      [b, 19_000, 26_200],
    ]);
    const r = m.analyse({
      history,
      replicas: [{ name: 'sh-r1', group: 'sh', events: [{ kind: 'reconcile', at: 18_600, key: moved }] }],
      rounds: [],
      T,
      leName: 'pod-counter',
      shardName: 'pod-counter',
      keys,
    });
    expect(r.sh.outsideOwnership).toBe(1);
    expect(r.sh.conflicting).toBe(0);
  });
});
