import { onAbort } from '@kubeloop/core';
import { describe, expect, it } from 'vitest';
import {
  GracefulShutdownTimeoutError,
  type LeaderElectionCallbacks,
  LeaderElectionLostError,
  type LeaderElectorHook,
  newManager,
  type Runnable,
} from '../src/index.js';
import { offlineConfig } from './support/config.js';

// No informer is created, so the manager never opens a connection.
const config = offlineConfig('builder-test');

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => onAbort(signal, () => resolve()));
}

/** A runnable that records `start <name>` / `stop <name>`. */
function recorder(events: string[], name: string, needLeaderElection?: boolean): Runnable {
  return {
    async start(signal) {
      events.push(`start ${name}`);
      await untilAborted(signal);
      events.push(`stop ${name}`);
    },
    ...(needLeaderElection === undefined ? {} : { needLeaderElection: () => needLeaderElection }),
  };
}

/** A leader elector driven by the test: `win()` / `lose()`; records `elector run` / `elector stop (release=…)`. */
function testElector(events: string[]) {
  let cb: LeaderElectionCallbacks | undefined;
  const elector: LeaderElectorHook = {
    async run(signal, callbacks) {
      cb = callbacks;
      events.push('elector run');
      await untilAborted(signal);
      events.push(`elector stop (release=${callbacks.mayRelease()})`);
      callbacks.onStoppedLeading();
    },
  };
  return {
    elector,
    running: () => cb !== undefined,
    win: () => cb?.onStartedLeading(),
    lose: () => cb?.onStoppedLeading(),
  };
}

describe('Manager runnable groups (controller-runtime runnable_group.go)', () => {
  it('starts HTTP servers → caches → non-leader runnables → leader election → leader-only runnables, and stops in reverse', async () => {
    const events: string[] = [];
    const le = testElector(events);
    const mgr = newManager(config, { leaderElection: { id: 'test', elector: le.elector } });
    let listening = false;
    mgr.addHTTPServer({
      async start(signal) {
        events.push('start http');
        await untilAborted(signal);
        events.push('stop http');
      },
      async ready() {
        await Promise.resolve();
        listening = true;
        events.push('http ready');
      },
    });
    mgr.add(recorder(events, 'leader-only'));
    mgr.add(recorder(events, 'everywhere', false));
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    await expect.poll(() => le.running()).toBe(true);
    expect(listening).toBe(true);
    expect(events).toEqual(['start http', 'http ready', 'start everywhere', 'elector run']);
    le.win();
    await mgr.elected();
    await expect.poll(() => events.includes('start leader-only')).toBe(true);
    ac.abort();
    await run;
    expect(events.slice(5)).toEqual([
      'stop leader-only',
      'elector stop (release=true)',
      'stop everywhere',
      'stop http',
    ]);
  });

  it('C23: a standby never starts leader-only runnables — not added before start, not added late, not while stopping', async () => {
    const events: string[] = [];
    const le = testElector(events);
    const mgr = newManager(config, { leaderElection: { id: 'test', elector: le.elector } });
    mgr.add(recorder(events, 'early'));
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    await expect.poll(() => le.running()).toBe(true);
    mgr.add(recorder(events, 'late'));
    let elected = false;
    void mgr.elected().then(() => {
      elected = true;
    });
    ac.abort();
    le.win(); // a win reported while stopping starts nothing
    await run;
    expect(events.filter((e) => e.startsWith('start'))).toEqual([]);
    expect(elected).toBe(false);
    expect(() => mgr.add(recorder(events, 'after stop'))).toThrow(/stopping/);
  });

  it('C23 variant: a leader-only runnable added to a standby after start starts exactly once, when it wins', async () => {
    const events: string[] = [];
    const le = testElector(events);
    const mgr = newManager(config, { leaderElection: { id: 'test', elector: le.elector } });
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    await expect.poll(() => le.running()).toBe(true);
    mgr.add(recorder(events, 'late'));
    expect(events).toEqual(['elector run']);
    le.win();
    le.win();
    await expect.poll(() => events).toEqual(['elector run', 'start late']);
    mgr.add(recorder(events, 'later'));
    await expect.poll(() => events.includes('start later')).toBe(true);
    ac.abort();
    await run;
    expect(events.filter((e) => e === 'start late')).toHaveLength(1);
  });

  it('a lost lease stops the manager with LeaderElectionLostError', async () => {
    const events: string[] = [];
    const le = testElector(events);
    const mgr = newManager(config, { leaderElection: { id: 'test', elector: le.elector } });
    mgr.add(recorder(events, 'work'));
    const run = mgr.start(new AbortController().signal);
    await expect.poll(() => le.running()).toBe(true);
    le.win();
    await expect.poll(() => events.includes('start work')).toBe(true);
    le.lose();
    await expect(run).rejects.toBeInstanceOf(LeaderElectionLostError);
    expect(events).toContain('stop work');
  });

  it('C24 (unit): leader-only runnables that overrun the grace period → GracefulShutdownTimeoutError and the lease is not released', async () => {
    const events: string[] = [];
    const le = testElector(events);
    const mgr = newManager(config, {
      gracefulShutdownTimeoutMs: 50,
      leaderElection: { id: 'test', elector: le.elector },
    });
    mgr.add({ start: () => new Promise<void>(() => {}) });
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    await expect.poll(() => le.running()).toBe(true);
    le.win();
    await mgr.elected();
    ac.abort();
    await expect(run).rejects.toBeInstanceOf(GracefulShutdownTimeoutError);
    expect(events).toContain('elector stop (release=false)');
  });

  it('without leader election, leader-only runnables start after the non-leader ones and elected() resolves', async () => {
    const events: string[] = [];
    const mgr = newManager(config);
    mgr.add(recorder(events, 'leader-only', true));
    mgr.add(recorder(events, 'everywhere', false));
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    await mgr.elected();
    await expect.poll(() => events).toEqual(['start everywhere', 'start leader-only']);
    ac.abort();
    await run;
    expect(events.slice(2)).toEqual(['stop leader-only', 'stop everywhere']);
  });
});

describe('Manager stop edge cases', () => {
  it('a runnable that rejects with an AbortError while the manager stops is not a manager error; another rejection is', async () => {
    const mgr = newManager(config);
    mgr.add({
      async start(signal) {
        await untilAborted(signal);
        throw new DOMException('stopped', 'AbortError');
      },
    });
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    await mgr.elected();
    ac.abort();
    await expect(run).resolves.toBeUndefined();

    const mgr2 = newManager(config);
    mgr2.add({
      async start(signal) {
        await untilAborted(signal);
        throw new Error('cleanup failed');
      },
    });
    const ac2 = new AbortController();
    const run2 = mgr2.start(ac2.signal);
    await mgr2.elected();
    ac2.abort();
    await expect(run2).rejects.toThrow('cleanup failed');
  });

  it('an HTTP server whose readiness wait is cut short by the stop is not a manager error', async () => {
    const mgr = newManager(config);
    let readyCalled = false;
    mgr.addHTTPServer({
      start: (signal) => untilAborted(signal),
      ready: (signal) =>
        new Promise<void>((_, reject) => {
          readyCalled = true;
          onAbort(signal, () => reject(new Error('aborted while waiting to listen')));
        }),
    });
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    await expect.poll(() => readyCalled).toBe(true);
    ac.abort();
    await expect(run).resolves.toBeUndefined();
  });
});
