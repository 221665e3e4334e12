import { ConfigMap } from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';

// envtest's restart() drops every connection. A client in the same process must have seen its pooled keep-alive
// socket closed by the time restart() resolves: a write sent right after it went out on the dead socket about
// one time in ten ("other side closed"), and a write is never retried (found by a new user's test of a controller
// across an API server restart). Needs envtest's restart, so it is skipped on a real cluster.
describe.skipIf(realCluster)('envtest restart: a write right after it', () => {
  const ctx = useFaultServer('kubeloop-restart-write-test');

  it('reaches the restarted server every time (the pooled connection is seen closed before restart resolves)', async () => {
    const failures: string[] = [];
    for (let i = 0; i < 30; i++) {
      await ctx.api.list(ConfigMap, { namespace: 'default' }); // a pooled keep-alive connection
      await ctx.server.restart({ keepState: true });
      try {
        await ctx.api.create(ConfigMap, { metadata: { namespace: 'default', generateName: 'restart-' } });
      } catch (err) {
        failures.push(`${i}: ${(err as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
