// The settle phase of a chaos run keeps measuring through failed lists: a 10-minute real-control-plane run at
// 10,000 objects ended with "timed out after 10000 ms" when its first settle-phase list of the server outlasted
// the client's timeout on a loaded box, although nothing was lost.

import type { Manager } from '@kubeloop/builder';
import type { ApiClient } from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import { settle } from '../src/chaos/measure.js';
import { configMapTraffic, ReconcileProbe } from '../src/index.js';

/** A server list that fails `failures` times (as a timed-out request does), then answers with no objects. */
function flakyLists(failures: number): { client: ApiClient; calls: () => number } {
  let calls = 0;
  const client = {
    async list() {
      calls++;
      if (calls <= failures) throw new Error(`timed out after 10000 ms (list ${calls})`);
      return { items: [] };
    },
  } as unknown as ApiClient;
  return { client, calls: () => calls };
}

const manager = { getClient: () => ({ list: async () => ({ items: [] }) }) } as unknown as Manager;
const run = (client: ApiClient, settleMs: number) =>
  settle(manager, client, configMapTraffic(), 'ns', new ReconcileProbe(), settleMs);

describe('settle', () => {
  it('measures again after a failed list and reports the run settled', async () => {
    const { client, calls } = flakyLists(2);
    const { check, settledAfterMs } = await run(client, 5000);
    expect(calls()).toBe(3);
    expect(check).toEqual({ lost: [], divergent: [] });
    expect(settledAfterMs).toBeGreaterThanOrEqual(0);
  });

  it('throws the last error when no measurement succeeds within the window', async () => {
    const { client } = flakyLists(Number.POSITIVE_INFINITY);
    await expect(run(client, 250)).rejects.toThrow(/timed out after 10000 ms \(list \d+\)/);
  });
});
