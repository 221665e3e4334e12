import type { RestConfig } from '@kubeloop/config';
import { describe, expect, it } from 'vitest';
import {
  ClusterEngageError,
  isValidClusterName,
  newCluster,
  newMultiClusterManager,
  requestKey,
  StaticProvider,
} from '../src/index.js';

const config: RestConfig = {
  host: 'https://127.0.0.1:1',
  tlsClientConfig: {},
  qps: 5,
  burst: 10,
  timeoutMs: 1000,
  userAgent: 'test',
};

describe('cluster-aware requests', () => {
  it('requestKey keeps single-cluster keys and separates clusters by a NUL', () => {
    expect(requestKey({ namespace: 'ns', name: 'a' })).toBe('ns/a');
    expect(requestKey({ namespace: '', name: 'a' })).toBe('a');
    expect(requestKey({ namespace: 'ns', name: 'a', cluster: '' })).toBe('ns/a');
    expect(requestKey({ namespace: 'ns', name: 'a', cluster: 'm1' })).toBe('m1\u0000ns/a');
    // A cluster named like a namespace never collides with a namespaced key.
    expect(requestKey({ namespace: '', name: 'a', cluster: 'ns' })).not.toBe(
      requestKey({ namespace: 'ns', name: 'a' }),
    );
  });

  it('cluster names: 1-63 letters, digits, -, _ or ., alphanumeric at both ends', () => {
    for (const ok of ['m1', 'member-1', 'eu_west.prod', 'A', 'a'.repeat(63)])
      expect(isValidClusterName(ok)).toBe(true);
    for (const bad of ['', '-a', 'a-', 'a/b', 'a:b', 'a\u0000', 'a'.repeat(64)])
      expect(isValidClusterName(bad)).toBe(false);
  });
});

describe('multi-cluster manager', () => {
  it('engage refuses a bad name, a taken name, and getCluster of an unknown name throws', () => {
    const mgr = newMultiClusterManager(config);
    const ac = new AbortController();
    expect(() => mgr.engage(ac.signal, 'a/b', newCluster(config))).toThrow(ClusterEngageError);
    mgr.engage(ac.signal, 'm1', newCluster(config, { name: 'm1' }));
    expect(() => mgr.engage(ac.signal, 'm1', newCluster(config, { name: 'm1' }))).toThrow(/engaged already/);
    expect(mgr.clusterNames()).toEqual(['m1']);
    expect(mgr.clusterStatus()).toEqual([
      expect.objectContaining({ name: 'm1', synced: false, reason: 'the manager has not started' }),
    ]);
    expect(mgr.getCluster('m1').name).toBe('m1');
    expect(mgr.getCluster(undefined)).toBe(mgr.getLocalCluster());
    expect(() => mgr.getCluster('nope')).toThrow(/not engaged/);
    ac.abort();
    expect(mgr.clusterNames()).toEqual([]);
  });

  it('StaticProvider refuses an invalid cluster name', () => {
    expect(() => new StaticProvider({ 'bad name': config })).toThrow(ClusterEngageError);
  });
});
