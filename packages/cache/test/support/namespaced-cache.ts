import { kind } from '@kubeloop/client';
import { FakeClock } from '@kubeloop/core/testing';
import { InformerCache, type InformerCacheOptions } from '../../src/index.js';
import type { FakeClient } from './fake-client.js';
import { retention } from './retention.js';

export const Namespace = kind('v1', 'Namespace');
export const Secret = kind('v1', 'Secret');

/**
 * Starts a cache on `fc` (a FakeClock unless `opts` gives a clock) with the suite's `objectRetention`;
 * `running` collects its stop signal.
 */
export function startCache(fc: FakeClient, opts: Partial<InformerCacheOptions>, running: AbortController[]) {
  const cache = new InformerCache({
    client: fc.asClient(),
    clock: new FakeClock(),
    objectRetention: retention(),
    ...opts,
  });
  const ac = new AbortController();
  running.push(ac);
  const done = cache.start(ac.signal);
  return {
    cache,
    ac,
    stop: async () => {
      ac.abort();
      await done;
    },
  };
}

/** ConfigMap `cm0` in namespaces a, b and c, Secret `s0` in c, cluster-scoped Namespace `c`; returns the ConfigMap server. */
export function seed(fc: FakeClient) {
  const s = fc.server('ConfigMap');
  for (const ns of ['a', 'b', 'c']) s.create('cm0', {}, ns);
  fc.server('Secret').create('s0', {}, 'c');
  fc.server('Namespace').create('c', {}, '');
  return s;
}

/** `namespace/name` of each object, sorted. */
export const names = (items: readonly { metadata?: { namespace?: string; name?: string } }[]) =>
  items.map((o) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name}`).sort();
