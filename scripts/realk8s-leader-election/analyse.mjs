// The figures of scripts/realk8s-leader-election.mjs, from the Leases' write history (in resourceVersion order)
// and the replicas' own log events. Pure: tests/integration/test/realk8s-leader-election-analysis.test.ts feeds it made-up
// histories. Times are epoch ms; a Lease's renewTime/acquireTime are written by the replica from its clock (the
// same host's clock here) when it sends the write, so a write committed late (after a pause) carries its send time.
import { rendezvousOwner } from '@kubeloop/builder/sharding';

/** The p-th percentile (nearest rank) of `xs`, or undefined when empty. */
export function percentile(xs, p) {
  if (!xs.length) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/** The most intervals `[start, end)` that overlap at one instant. */
export function maxOverlap(intervals) {
  const points = [];
  for (const { start, end } of intervals) if (end > start) points.push([start, 1], [end, -1]);
  // an interval ending at t and one starting at t do not overlap: ends first
  points.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let n = 0;
  let max = 0;
  for (const [, d] of points) {
    n += d;
    if (n > max) max = n;
  }
  return max;
}

/**
 * Leader terms: consecutive writes of one holder with one acquireTime. A term leads from its acquireTime until
 * its last renewTime + renewDeadline (the elector stops leading when no renew it sent succeeded within the renew
 * deadline of sending it).
 */
export function leaderTerms(history, leaseName, renewMs) {
  const terms = [];
  let cur;
  for (const h of history) {
    if (h.name !== leaseName || h.type === 'DELETED' || !h.holder || h.renewTime === undefined) continue;
    if (!cur || cur.holder !== h.holder || cur.acquireTime !== h.acquireTime) {
      cur = {
        holder: h.holder,
        acquireTime: h.acquireTime,
        start: h.acquireTime,
        lastRenew: h.renewTime,
        writes: 0,
      };
      terms.push(cur);
    }
    cur.writes++;
    cur.lastRenew = Math.max(cur.lastRenew, h.renewTime);
  }
  for (const t of terms) t.end = t.lastRenew + renewMs;
  return terms;
}

/**
 * Ownership intervals of each key under the sharding protocol, from the member Leases' history: a member claims a
 * key while its latest acknowledgement gives it the key and it renewed within the renew deadline (a gap longer
 * than that fences it: the claim restarts at its next write). It may reconcile the key (owns it) only once every
 * earlier claimant is released as it can know: that claimant's write dropping the key, or its last renew the
 * server had taken by then + leaseDuration (how long the others wait before they count it gone). A renew the
 * server took later (sent into a partition or a paused server, delivered after the fault) no member could have
 * read in time, and its sender had already given it up: it extends the claimant's claim, not its release.
 */
export function ownership(history, shardName, keys, T) {
  const prefix = `${shardName}-shard-`;
  const writes = new Map(); // identity -> [{ at, ack, deleted }]
  for (const h of history) {
    if (!h.name?.startsWith(prefix)) continue;
    const id = h.name.slice(prefix.length);
    const w = writes.get(id) ?? [];
    writes.set(id, w);
    if (h.type === 'DELETED') w.push({ at: w.at(-1)?.at ?? 0, deleted: true });
    else if (h.renewTime !== undefined)
      w.push({
        at: h.renewTime,
        // when the server took it (the watch's receipt; the send time where unknown)
        committedAt: h.at ?? h.renewTime,
        ack: h.drainedFor === undefined ? undefined : h.drainedFor.split(',').filter(Boolean),
      });
  }
  const byKey = new Map();
  for (const k of keys) {
    const claims = [];
    for (const [id, ws] of writes) {
      let open;
      const close = (end, dropped) => {
        if (!open) return;
        open.end = end;
        open.dropped = dropped;
        claims.push(open);
        open = undefined;
      };
      for (const w of ws) {
        if (w.deleted) {
          close(Math.min(w.at + T.renewMs, open?.lastRenew + T.renewMs), true);
          continue;
        }
        if (open && w.at - open.lastRenew > T.renewMs) close(open.lastRenew + T.renewMs, false);
        const mine = w.ack !== undefined && rendezvousOwner(k, w.ack) === id;
        if (mine && !open)
          open = {
            id,
            key: k,
            claimedAt: w.at,
            committedAt: w.committedAt,
            lastRenew: w.at,
            renews: [w],
          };
        else if (mine) {
          open.lastRenew = w.at;
          open.renews.push(w);
        } else if (open) close(w.at, true); // it drained the key before writing the acknowledgement without it
      }
      if (open) close(open.lastRenew + T.renewMs, false);
    }
    claims.sort((a, b) => a.claimedAt - b.claimedAt);
    // When claim `o` is released for a member acting at `t`: its drop, or its last renew the server had taken
    // by `t` + leaseDuration.
    const releasedFor = (o, t) => {
      if (o.dropped) return o.end;
      let last = Number.NEGATIVE_INFINITY;
      for (const r of o.renews) if (r.committedAt <= t && r.at > last) last = r.at;
      return last + T.leaseMs;
    };
    for (const c of claims) {
      // only other members gate a claim: a member's own earlier claim (before a fence) is no other owner
      // A member acts on a claim after the server took it and a later read of the others: every other claim
      // the server took before it is seen (a write sent before a partition can be taken long after).
      const gates = claims.filter((o) => o.id !== c.id && o.committedAt <= c.committedAt);
      // The earliest time by which every gate is released as seen then: what the server took before this
      // claim, or before that time (renews it took later do not count).
      let start = c.claimedAt;
      for (let moved = true; moved; ) {
        moved = false;
        for (const o of gates) {
          const r = releasedFor(o, Math.max(start, c.committedAt));
          if (r > start) {
            start = r;
            moved = true;
          }
        }
      }
      c.start = start;
    }
    byKey.set(
      k,
      claims.filter((c) => c.end > c.start),
    );
  }
  return byKey;
}

/** All figures. `safe` is false when a safety figure is broken. */
export function analyse({ history, replicas, rounds, T, leName, shardName, keys }) {
  const notes = [];
  // ---- leader election
  const terms = leaderTerms(history, leName, T.renewMs);
  const maxLeaders = maxOverlap(terms);
  const procIntervals = [];
  for (const r of replicas.filter((x) => x.group === 'le')) {
    let open;
    for (const e of r.events) {
      if (e.kind === 'leader') open = e.at;
      else if ((e.kind === 'lost' || e.kind === 'exit') && open !== undefined) {
        procIntervals.push({ start: open, end: e.at });
        open = undefined;
      }
    }
    if (open !== undefined) procIntervals.push({ start: open, end: Number.POSITIVE_INFINITY });
  }
  const maxProcessLeaders = maxOverlap(procIntervals);
  // What a round caused happens before the next round's fault: a leader or owner that rode the fault out and
  // lost its Lease to the next round's is that round's failover, not this one's.
  const horizon = (r, ms) => {
    const next = rounds.find((x) => x.start > r.start);
    return Math.min(r.end + ms, next ? next.start : Number.POSITIVE_INFINITY);
  };
  const leByKind = {};
  for (const r of rounds) {
    leByKind[r.kind] ??= { n: 0, failovers: [], kept: 0 };
    const k = leByKind[r.kind];
    k.n++;
    const i = terms.findIndex((t) => t.holder === r.leHolder && t.acquireTime === r.leAcquire);
    const next = i >= 0 ? terms[i + 1] : undefined;
    if (i < 0) notes.push(`round ${r.kind} ${r.i + 1}: the leader's term is not in the history`);
    else if (!next || next.start > horizon(r, 60_000)) k.kept++;
    else k.failovers.push(next.start - terms[i].lastRenew);
  }
  // leadership changes no fault caused
  const faultWindows = rounds.map((r) => [r.start, r.end + T.leaseMs + 2 * T.retryMs + 10_000]);
  const spontaneous = terms
    .slice(1)
    .filter((t) => !faultWindows.some(([a, b]) => t.start >= a && t.start <= b)).length;
  if (spontaneous)
    notes.push(
      `${spontaneous} leader terms began outside the fault rounds (a renew that missed its deadline on the loaded box)`,
    );
  for (const [k, v] of Object.entries(leByKind))
    if (v.kept)
      notes.push(
        `leader election, ${k}: in ${v.kept} of ${v.n} rounds the leader kept its term (the fault was shorter than the renew deadline), no failover to measure`,
      );

  // ---- sharding
  const own = ownership(history, shardName, keys, T);
  let maxOwners = 0;
  for (const cs of own.values()) maxOwners = Math.max(maxOwners, maxOverlap(cs));
  // A reconcile's log line is written when it ends. One that ends outside its member's ownership ran (at least in
  // part) past the member's fence or before its claim; one that ends while another member owns the key is two
  // owners at once as the processes saw it.
  let outsideOwnership = 0;
  let conflicting = 0;
  let reconciles = 0;
  const outside = [];
  const conflicts = [];
  const at = (ms) => new Date(ms).toISOString().slice(11, 23);
  for (const r of replicas.filter((x) => x.group === 'sh')) {
    for (const e of r.events) {
      if (e.kind !== 'reconcile') continue;
      reconciles++;
      const cs = own.get(e.key) ?? [];
      const mine = (c) => c.id.startsWith(`${r.name}-`);
      const inside = (c) => e.at >= c.start && e.at <= c.end;
      if (!cs.some((c) => mine(c) && inside(c))) {
        outsideOwnership++;
        if (outside.length < 5) outside.push(`${r.name} ${e.key} at ${at(e.at)}`);
      }
      const other = cs.find((c) => !mine(c) && inside(c));
      if (other) {
        conflicting++;
        if (conflicts.length < 5)
          conflicts.push(`${r.name} ${e.key} at ${at(e.at)} while ${other.id} owned it`);
      }
    }
  }
  if (outside.length)
    notes.push(
      `sharding: ${outsideOwnership} reconciles ended outside their member's ownership (after its renew deadline or before its claim), e.g.: ${outside.join('; ')}`,
    );
  if (conflicts.length)
    notes.push(`sharding: reconciles while another member owned the key: ${conflicts.join('; ')}`);
  const shByKind = {};
  for (const r of rounds) {
    shByKind[r.kind] ??= { n: 0, handovers: [], kept: 0 };
    const k = shByKind[r.kind];
    k.n++;
    let worst;
    for (const cs of own.values()) {
      const before = cs.find((c) => c.start <= r.start && c.end >= r.start);
      if (!before) continue;
      if (r.shardVictim && !before.id.startsWith(`${r.shardVictim}-`)) continue;
      const after = cs.find((c) => c !== before && c.start >= before.start && c.start >= r.start);
      if (!after || after.start > horizon(r, 120_000)) continue;
      // the same member keeping the key through the fault is no hand-over
      const gap = after.start - before.lastRenew;
      if (worst === undefined || gap > worst) worst = gap;
    }
    if (worst !== undefined) k.handovers.push(worst);
    else k.kept++;
  }
  for (const [k, v] of Object.entries(shByKind))
    if (v.kept)
      notes.push(
        `sharding, ${k}: in ${v.kept} of ${v.n} rounds every member concerned kept its keys (no hand-over to measure)`,
      );
  notes.push(
    `sharding: ${reconciles} reconciles logged by the members; ${keys.length} keys (namespaces with a pod); hand-over = the longest, over the faulted member's keys (all keys for a server fault), from the last renew of the key's owner to the next owner's start`,
  );
  const restarts = replicas.reduce((n, r) => n + r.events.filter((e) => e.kind === 'start').length - 1, 0);
  return {
    safe: maxLeaders <= 1 && maxProcessLeaders <= 1 && maxOwners <= 1 && conflicting === 0,
    writes: history.length,
    restarts,
    le: { maxLeaders, maxProcessLeaders, terms: terms.length, byKind: leByKind },
    sh: { maxOwners, outsideOwnership, conflicting, reconciles, byKind: shByKind },
    notes,
  };
}
