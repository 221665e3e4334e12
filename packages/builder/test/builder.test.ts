import { ConfigMap, kind, Pod } from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import {
  ChannelSource,
  ControllerError,
  enqueueRequestForObject,
  newControllerManagedBy,
  newManager,
} from '../src/index.js';
import { offlineConfig } from './support/config.js';

// Nothing here talks to a server: build() creates sources, which start only with the manager.
const config = offlineConfig('builder-test');
const noop = { reconcile: async () => undefined };

describe('ControllerBuilder build-time errors (controller-runtime pkg/builder)', () => {
  it('nothing to watch, owns without for, watches without a name, malformed kinds and names, duplicate names', () => {
    const mgr = newManager(config);
    expect(() => newControllerManagedBy(mgr).complete(noop)).toThrow(
      /must provide an object for reconciliation/,
    );
    expect(() =>
      newControllerManagedBy(mgr)
        .owns(ConfigMap)
        .named('x')
        .watches(Pod, enqueueRequestForObject())
        .complete(noop),
    ).toThrow(/owns\(\) can only be used together with for/);
    expect(() => newControllerManagedBy(mgr).watches(Pod, enqueueRequestForObject()).complete(noop)).toThrow(
      /one of for\(kind\) or named\(name\)/,
    );
    expect(() => newControllerManagedBy(mgr).for(kind('', 'Nope')).complete(noop)).toThrow(/unknown kind/);
    expect(() =>
      newControllerManagedBy(mgr).for(Pod).watches(kind('v1', ''), enqueueRequestForObject()).complete(noop),
    ).toThrow(/watches: unknown kind/);
    expect(() => newControllerManagedBy(mgr).for(Pod).named('-bad').complete(noop)).toThrow(ControllerError);
    expect(() =>
      newControllerManagedBy(mgr)
        .for(Pod)
        .complete({} as never),
    ).toThrow(/needs a Reconciler/);
    newControllerManagedBy(mgr).for(ConfigMap).complete(noop);
    expect(() => newControllerManagedBy(mgr).for(ConfigMap).complete(noop)).toThrow(/already exists/);
    // skipNameValidation skips the uniqueness check.
    expect(
      newControllerManagedBy(mgr).for(ConfigMap).withOptions({ skipNameValidation: true }).complete(noop)
        .name,
    ).toBe('configmap');
  });

  it('named watches without for, raw sources, options and manager-wide controller defaults', () => {
    const mgr = newManager(config, { controller: { maxConcurrentReconciles: 3, needLeaderElection: false } });
    async function* none() {}
    const c = newControllerManagedBy(mgr)
      .named('from-channel')
      .watchesRawSource(new ChannelSource(none(), enqueueRequestForObject()))
      .complete(noop);
    expect(c.name).toBe('from-channel');
    expect(c.needLeaderElection()).toBe(false);
    const d = newControllerManagedBy(mgr)
      .for(Pod)
      .owns(ConfigMap, { onlyControllerOwner: false })
      .watches(ConfigMap, enqueueRequestForObject())
      .withOptions({ needLeaderElection: true })
      .complete(noop);
    expect(d.name).toBe('pod');
    expect(d.needLeaderElection()).toBe(true);
  });
});
