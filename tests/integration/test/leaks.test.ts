// Leaks: many watch reconnects and many short watches leave the process where it was —
// heap after GC, sockets at the server, active handles, abort listeners on the caller's signal.
// CI runs LEAKS_N=100 of each (a few seconds); the big run is LEAKS_N=10000 (see docs/reliability.md).
import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ConfigMap } from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';

const N = Number(process.env.LEAKS_N ?? 100);
/** The stated bounds: heap after GC grows by at most 5 MB; the server sees at most 4 sockets from us. */
const HEAP_BOUND = 5 * 1024 * 1024;
const SOCKET_BOUND = 4;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

interface Sample {
  heap: number;
  sockets: number;
  handles: Record<string, number>;
}

async function sample(openConnections: () => number, clearRequestLog: () => void): Promise<Sample> {
  // The in-process server keeps a request log (100,000 records by design): not a leak of the client's.
  clearRequestLog();
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  const handles: Record<string, number> = {};
  for (const h of process.getActiveResourcesInfo()) handles[h] = (handles[h] ?? 0) + 1;
  return { heap: process.memoryUsage().heapUsed, sockets: openConnections(), handles };
}

function handleGrowth(before: Sample, after: Sample): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, n] of Object.entries(after.handles)) {
    const d = n - (before.handles[k] ?? 0);
    if (d > 0) out[k] = d;
  }
  return out;
}

describe.skipIf(realCluster)('leaks: watch reconnects and short watches stay flat', () => {
  const ctx = useFaultServer('kubeloop-leaks');

  it(`${N} watch reconnects (the server ends each watch after one event) on one caller signal`, {
    timeout: 300_000,
  }, async () => {
    const ns = await ctx.namespace('leaks-reconnect');
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'one' }, data: { a: '1' } });
    ctx.server.faults.endWatches({ match: { verb: 'watch', namespace: ns }, afterEvents: 1 });
    const parent = new AbortController();
    const oneWatch = async () => {
      let events = 0;
      for await (const _ of ctx.api.watch(ConfigMap, { namespace: ns, signal: parent.signal })) events++;
      return events;
    };
    for (let i = 0; i < 20; i++) await oneWatch(); // warm up pools and JIT
    const before = await sample(
      () => ctx.server.openConnections(),
      () => ctx.server.faults.clearRequests(),
    );
    let events = 0;
    for (let i = 0; i < N; i++) events += await oneWatch();
    const after = await sample(
      () => ctx.server.openConnections(),
      () => ctx.server.faults.clearRequests(),
    );
    const figures = {
      reconnects: N,
      heapDeltaBytes: after.heap - before.heap,
      sockets: after.sockets,
      handleGrowth: handleGrowth(before, after),
      abortListeners: getEventListeners(parent.signal, 'abort').length,
    };
    console.log(`leaks: ${JSON.stringify(figures)}`);
    expect(events).toBe(N);
    expect(figures.heapDeltaBytes).toBeLessThanOrEqual(HEAP_BOUND);
    expect(figures.sockets).toBeLessThanOrEqual(SOCKET_BOUND);
    expect(figures.abortListeners).toBe(0);
    expect(Object.values(figures.handleGrowth).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(2);
  });

  it(`${N} short watches the caller leaves after the first event (half by break, half by abort)`, {
    timeout: 300_000,
  }, async () => {
    const ns = await ctx.namespace('leaks-short');
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'one' }, data: { a: '1' } });
    const parent = new AbortController();
    const oneWatch = async (i: number) => {
      const own = new AbortController();
      const onParent = () => own.abort();
      parent.signal.addEventListener('abort', onParent, { once: true });
      try {
        for await (const _ of ctx.api.watch(ConfigMap, { namespace: ns, signal: own.signal })) {
          if (i % 2 === 0) break;
          own.abort();
        }
      } catch (err) {
        if (!own.signal.aborted) throw err;
      } finally {
        parent.signal.removeEventListener('abort', onParent);
      }
    };
    for (let i = 0; i < 20; i++) await oneWatch(i);
    const before = await sample(
      () => ctx.server.openConnections(),
      () => ctx.server.faults.clearRequests(),
    );
    for (let i = 0; i < N; i++) await oneWatch(i);
    // The server notices a client-closed watch asynchronously.
    await expect.poll(() => ctx.server.activeWatches(), { timeout: 10_000 }).toBe(0);
    const after = await sample(
      () => ctx.server.openConnections(),
      () => ctx.server.faults.clearRequests(),
    );
    const figures = {
      shortWatches: N,
      heapDeltaBytes: after.heap - before.heap,
      sockets: after.sockets,
      handleGrowth: handleGrowth(before, after),
      abortListeners: getEventListeners(parent.signal, 'abort').length,
    };
    console.log(`leaks: ${JSON.stringify(figures)}`);
    expect(figures.heapDeltaBytes).toBeLessThanOrEqual(HEAP_BOUND);
    expect(figures.sockets).toBeLessThanOrEqual(SOCKET_BOUND);
    expect(figures.abortListeners).toBe(0);
    expect(Object.values(figures.handleGrowth).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(2);
  });
});
