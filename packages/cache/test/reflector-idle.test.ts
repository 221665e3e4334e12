// A watch cut by the transport's idle watchdog (TransportError 'IdleTimeout') resumes
// from the last resourceVersion with no relist. kube-apiserver sends no bookmark to watches of a resource type
// that saw no event since it started (its cacher skips bookmarks until then), so on a quiet type every watch is
// silent until its timeoutSeconds and the watchdog (120 s by default) cuts it: treated as any other failure, each
// cut was a full relist of the type and a warning, every two minutes, per informer.
import { TransportError } from '@kubeloop/client/transport';
import { FakeClock } from '@kubeloop/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Reflector } from '../src/index.js';
import { cm, FakeServer, RecordingStore, warnRecordingLogger } from './support/fake-server.js';

const running: AbortController[] = [];
afterEach(() => {
  for (const ac of running.splice(0)) ac.abort();
});

function start(srv: FakeServer) {
  const clock = new FakeClock();
  const { logger, warns } = warnRecordingLogger();
  const errors: unknown[] = [];
  const store = new RecordingStore();
  const r = new Reflector(srv, store, {
    clock,
    random: () => 0,
    logger,
    onWatchError: (e) => errors.push(e),
  });
  const ac = new AbortController();
  running.push(ac);
  const done = r.run(ac.signal);
  const until = (cond: () => boolean) =>
    vi.waitFor(
      () => {
        clock.step(1000);
        if (!cond()) throw new Error('not yet');
      },
      { timeout: 5000, interval: 2 },
    );
  return { r, store, warns, errors, until, ac, done };
}

const idle = () => new TransportError('IdleTimeout', 'GET /api/v1/configmaps: no data for 120000 ms');

describe('Reflector: a watch cut by the idle watchdog', () => {
  it('re-watches at once from the list resourceVersion without a relist when the cut came before any event', async () => {
    const srv = new FakeServer(3);
    srv.watchFaults.push({ error: idle() }, { error: idle() });
    const t = start(srv);
    await t.until(() => srv.watchCalls.length === 3);
    expect(srv.listCalls).toHaveLength(1);
    expect(srv.watchCalls.map((w) => w.resourceVersion)).toEqual(['4', '4', '4']);
    t.ac.abort();
    await t.done;
  });

  it('resumes from the last event resourceVersion after events, with no replayed events and no relist', async () => {
    const srv = new FakeServer(3);
    srv.watchFaults.push({ events: [{ type: 'ADDED', object: cm('late', 7) }], error: idle() });
    const t = start(srv);
    await t.until(() => srv.watchCalls.length === 2);
    expect(srv.listCalls).toHaveLength(1);
    expect(srv.watchCalls[1]?.resourceVersion).toBe('7');
    expect(t.store.ops).toEqual(['replace 3@4', 'add late@7']);
    t.ac.abort();
    await t.done;
  });
});
