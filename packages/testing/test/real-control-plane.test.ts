// The chaos harness's real target: kube-apiserver + etcd from a folder of binaries (KUBEBUILDER_ASSETS). Skipped
// when the folder is not there (CI has no binaries); run with KUBEBUILDER_ASSETS=<dir with kube-apiserver, etcd>.

import { newControllerManagedBy } from '@kubeloop/builder';
import { ConfigMap, Namespace, newClient } from '@kubeloop/client';
import { isExpired } from '@kubeloop/client/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chaosPassed,
  formatChaosReport,
  REAL_FAULT_KINDS,
  RealControlPlane,
  realControlPlaneAssetsMissing,
  runChaos,
} from '../src/index.js';

const assets = process.env.KUBEBUILDER_ASSETS;
const missing = realControlPlaneAssetsMissing(assets);

describe('realControlPlaneAssetsMissing', () => {
  it('names what the folder lacks', () => {
    expect(realControlPlaneAssetsMissing(undefined)).toMatch(/no assets folder/);
    expect(realControlPlaneAssetsMissing('/nonexistent')).toBe('/nonexistent has no kube-apiserver and etcd');
  });

  it('runChaos refuses a fault kind its target cannot make, naming it', async () => {
    await expect(runChaos({ faults: ['apiserverPause'], setup() {} })).rejects.toThrow(
      /apiserverPause cannot be made on the in-process server/,
    );
  });
});

describe.skipIf(missing !== undefined)(`RealControlPlane (${missing ?? assets})`, () => {
  let cp: RealControlPlane;
  beforeAll(async () => {
    cp = await RealControlPlane.start({ assetsDir: assets as string });
  }, 180_000);
  afterAll(async () => {
    await cp?.stop();
  }, 60_000);

  it('pauses, restarts and compacts as in production; the proxy forwards and resets', {
    timeout: 300_000,
  }, async () => {
    const api = newClient({ ...cp.config, timeoutMs: 3000 });
    const viaProxy = newClient({ ...cp.proxiedConfig(), timeoutMs: 10_000 });
    try {
      await api.create(Namespace, { metadata: { name: 'rcp' } });
      const cm = await api.create(ConfigMap, { metadata: { namespace: 'rcp', name: 'a' }, data: { v: '1' } });
      expect((await viaProxy.get(ConfigMap, { namespace: 'rcp', name: 'a' })).data?.v).toBe('1');

      // SIGSTOP: a black hole (the request times out), SIGCONT: served again
      cp.pauseApiServer();
      const stalled = await api.get(ConfigMap, { namespace: 'rcp', name: 'a' }).catch((e: unknown) => e);
      cp.resumeApiServer();
      expect(String(stalled)).toMatch(/timed out/);
      expect((await api.get(ConfigMap, { namespace: 'rcp', name: 'a' })).data?.v).toBe('1');

      // kill + restart of each process keeps the state
      await cp.restartApiServer();
      await api.update(ConfigMap, { ...cm, data: { v: '2' } });
      await cp.restartEtcd();
      expect((await viaProxy.get(ConfigMap, { namespace: 'rcp', name: 'a' })).data?.v).toBe('2');

      // compaction: a paged list continued from before it answers 410
      for (let i = 0; i < 5; i++)
        await api.create(ConfigMap, { metadata: { namespace: 'rcp', name: `p${i}` } });
      const page = await api.list(ConfigMap, { namespace: 'rcp', limit: 2 });
      expect(page.metadata?.continue).toBeTruthy();
      for (let i = 0; i < 3; i++)
        await api.update(ConfigMap, {
          ...cm,
          metadata: { ...cm.metadata, resourceVersion: undefined },
          data: { v: `c${i}` },
        });
      expect(await cp.compactEtcd()).toBeGreaterThan(0);
      const after = await api
        .list(ConfigMap, { namespace: 'rcp', limit: 2, continue: page.metadata?.continue as string })
        .catch((e: unknown) => e);
      expect(isExpired(after), String(after)).toBe(true);

      // the proxy's reset reaches the client as a transport error, and the next request reconnects
      cp.proxy.resetAll();
      expect((await viaProxy.get(ConfigMap, { namespace: 'rcp', name: 'a' })).data?.v).toBe('c2');
    } finally {
      await api.close();
      await viaProxy.close();
    }
  });

  it('runChaos with every real fault: nothing lost, cache equals the server, no concurrent reconcile, no unhandled rejection', {
    timeout: 600_000,
  }, async () => {
    const report = await runChaos({
      realControlPlane: cp,
      objects: 60,
      durationMs: 40_000,
      faultGapMs: 2500,
      writesPerSecond: 10,
      settleMs: 60_000,
      faults: REAL_FAULT_KINDS,
      setup(env) {
        newControllerManagedBy(env.manager)
          .for(env.traffic.kind)
          .named('real-chaos')
          .withOptions({ maxConcurrentReconciles: 4 })
          .complete(
            env.probe.wrap(env.traffic.kind, env.manager.getClient(), { reconcile: async () => undefined }),
          );
      },
      log: (line) => console.log(line),
    });
    console.log(formatChaosReport(report));
    expect(report.target).toBe('real');
    expect(chaosPassed(report), formatChaosReport(report)).toBe(true);
    expect(report.reconciles).toBeGreaterThan(report.objects);
  });
});
