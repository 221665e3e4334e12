import { Pod } from '@kubeloop/client';
import { onAbort } from '@kubeloop/core';
import { describe, expect, it } from 'vitest';
import { ControllerError, newControllerManagedBy, newManager, type Runnable } from '../src/index.js';
import { offlineConfig } from './support/config.js';

// Nothing here talks to a server: no informer is created, so the manager never opens a connection.
const config = offlineConfig('builder-test');
const noop = { reconcile: async () => undefined };

describe('Manager and builder', () => {
  it('builder: for() is required and only once; names default to the kind and must be unique', () => {
    const mgr = newManager(config);
    expect(() => newControllerManagedBy(mgr).complete(noop)).toThrow(/for\(kind\)/);
    expect(() => newControllerManagedBy(mgr).for(Pod).for(Pod)).toThrow(ControllerError);
    const c = newControllerManagedBy(mgr).for(Pod).complete(noop);
    expect(c.name).toBe('pod');
    expect(() => newControllerManagedBy(mgr).for(Pod).complete(noop)).toThrow(/already exists/);
    expect(newControllerManagedBy(mgr).for(Pod).named('pods-2').complete(noop).name).toBe('pods-2');
    expect(() => newControllerManagedBy(mgr).for(Pod).named('bad name!').complete(noop)).toThrow(
      ControllerError,
    );
  });

  it('starts runnables, stops them when the signal aborts, and refuses a second start', async () => {
    const mgr = newManager(config);
    const events: string[] = [];
    const r: Runnable = {
      async start(signal) {
        events.push('started');
        await new Promise<void>((resolve) => onAbort(signal, () => resolve()));
        events.push('stopped');
      },
    };
    mgr.add(r);
    const ac = new AbortController();
    const done = mgr.start(ac.signal);
    await expect.poll(() => events).toEqual(['started']);
    // Added after start: started at once.
    mgr.add({
      async start(signal) {
        events.push('late');
        await new Promise<void>((resolve) => onAbort(signal, () => resolve()));
      },
    });
    await expect.poll(() => events.includes('late')).toBe(true);
    ac.abort();
    await done;
    expect(events).toContain('stopped');
    await expect(mgr.start(new AbortController().signal)).rejects.toThrow(/already started/);
  });

  it('a failing runnable stops the others and start rejects with its error', async () => {
    const mgr = newManager(config);
    let otherStopped = false;
    mgr.add({
      async start(signal) {
        await new Promise<void>((resolve) => onAbort(signal, () => resolve()));
        otherStopped = true;
      },
    });
    mgr.add({
      async start() {
        throw new Error('boom');
      },
    });
    await expect(mgr.start(new AbortController().signal)).rejects.toThrow('boom');
    expect(otherStopped).toBe(true);
  });
});
