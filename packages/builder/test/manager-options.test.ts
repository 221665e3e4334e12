import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CACHE_SYNC_TIMEOUT_MS,
  DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS,
  LeaderElectionConfigError,
  type LeaderElectorHook,
  type ManagerOptions,
  newManager,
  newMetricsRegistry,
  resolveLeaderElectionOptions,
  resolveManagerOptions,
} from '../src/index.js';
import {
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
} from '../src/leaderelection/index.js';
import { offlineConfig } from './support/config.js';

const offline = offlineConfig('manager-options-test');

describe('resolveManagerOptions', () => {
  it('applies every default: servers off, no leader election, controller-runtime timeouts', () => {
    const o = resolveManagerOptions();
    expect(o.metrics).toEqual({
      bindAddress: '0',
      registry: undefined,
      extraHandlers: {},
      // Plain HTTP, no filter, no profiling: controller-runtime's defaults (SecureServing false, no FilterProvider).
      secureServing: false,
      certDir: '/tmp/k8s-metrics-server/serving-certs',
      certName: 'tls.crt',
      keyName: 'tls.key',
      authenticationAndAuthorization: false,
      profiling: false,
    });
    expect(o.health).toEqual({
      bindAddress: '0',
      livenessEndpointName: '/healthz',
      readinessEndpointName: '/readyz',
    });
    expect(o.leaderElection).toBeUndefined();
    expect(o.cache.syncTimeoutMs).toBe(DEFAULT_CACHE_SYNC_TIMEOUT_MS);
    expect(o.gracefulShutdownTimeoutMs).toBe(DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS);
    expect(o.webhook).toEqual({});
    // The transport logs through the manager's logger unless told otherwise.
    expect(o.client.transport?.logger).toBeDefined();
  });

  it('leader election: giving the object turns it on, with the Lease defaults of controller-runtime', () => {
    const o = resolveManagerOptions({ leaderElection: { id: 'my-lock' } });
    expect(o.leaderElection).toEqual({
      id: 'my-lock',
      namespace: undefined,
      identity: undefined,
      labels: {},
      releaseOnCancel: false,
      restConfig: undefined,
      leaseDurationMs: DEFAULT_LEASE_DURATION_MS,
      renewDeadlineMs: DEFAULT_RENEW_DEADLINE_MS,
      retryPeriodMs: DEFAULT_RETRY_PERIOD_MS,
      elector: undefined,
    });
  });

  it('refuses an empty leaderElection.id and a negative or infinite duration, naming the field', () => {
    expect(() => resolveLeaderElectionOptions({ id: '' })).toThrow(LeaderElectionConfigError);
    expect(() => resolveManagerOptions({ leaderElection: { id: '' } })).toThrow(/leaderElection\.id/);
    expect(() => resolveManagerOptions({ gracefulShutdownTimeoutMs: -1 })).toThrow(
      /gracefulShutdownTimeoutMs/,
    );
    expect(() => resolveManagerOptions({ cache: { syncTimeoutMs: Number.POSITIVE_INFINITY } })).toThrow(
      /cache\.syncTimeoutMs/,
    );
  });

  it('returns a frozen copy: nested objects too, and changing the input later changes nothing', () => {
    const extraHandlers: Record<string, never> = {};
    const labels: Record<string, string> = { a: '1' };
    const input = {
      metrics: { bindAddress: '127.0.0.1:0', extraHandlers },
      leaderElection: { id: 'x', labels },
      cache: { defaultNamespaces: ['ns'] },
    };
    const o = resolveManagerOptions(input);
    input.metrics.bindAddress = ':8080';
    labels.b = '2';
    expect(o.metrics.bindAddress).toBe('127.0.0.1:0');
    expect(o.leaderElection?.labels).toEqual({ a: '1' });
    for (const part of [
      o,
      o.metrics,
      o.health,
      o.cache,
      o.client,
      o.leaderElection,
      o.metrics.extraHandlers,
    ]) {
      expect(Object.isFrozen(part)).toBe(true);
    }
  });
});

describe('newManager options', () => {
  it('getOptions() is the resolved copy made at construction', () => {
    const registry = newMetricsRegistry();
    const elector: LeaderElectorHook = { run: async () => undefined };
    const options: { -readonly [K in keyof ManagerOptions]: ManagerOptions[K] } = {
      metrics: { registry },
      leaderElection: { id: 'lock', elector },
      webhook: { bindAddress: '127.0.0.1:0' },
    };
    const mgr = newManager(offline, options);
    options.metrics = { bindAddress: ':8080' };
    options.leaderElection = undefined;
    const o = mgr.getOptions();
    expect(o.metrics.bindAddress).toBe('0');
    expect(o.metrics.registry).toBe(registry);
    expect(mgr.getMetricsRegistry()).toBe(registry);
    expect(o.leaderElection?.elector).toBe(elector);
    expect(o.webhook).toEqual({ bindAddress: '127.0.0.1:0' });
    expect(Object.isFrozen(o)).toBe(true);
  });
});
