// The chaos harness's real-target paths (runChaos with a running RealControlPlane, applyRealFault for every kind)
// without binaries: a stand-in control plane whose "processes" are envtest's in-process server and whose proxy is a
// real FaultProxy in front of it. It proves the harness drives each fault, keeps a control plane it was handed
// running (faults cleared), and reports as the real target; real-control-plane.test.ts proves the faults
// themselves on kube-apiserver + etcd where the binaries exist.

import { connect, type Socket } from 'node:net';
import { newControllerManagedBy } from '@kubeloop/builder';
import type { RestConfig } from '@kubeloop/config';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyRealFault,
  chaosPassed,
  FaultProxy,
  formatChaosReport,
  REAL_FAULT_KINDS,
  RealControlPlane,
  type RealFaultKind,
  runChaos,
} from '../src/index.js';

/** A TCP connection through the proxy, once the proxy has accepted it. */
async function openThroughProxy(proxy: FaultProxy): Promise<Socket> {
  const before = proxy.acceptedConnections;
  const s = connect({ host: '127.0.0.1', port: proxy.port });
  s.on('error', () => {});
  while (proxy.acceptedConnections === before) await new Promise((r) => setTimeout(r, 5));
  return s;
}

/** What the stand-in was asked to do, in order. */
type Call = 'pause' | 'resume' | 'restartApiServer' | 'restartEtcd' | 'compact' | 'clearFaults' | 'stop';

/**
 * A RealControlPlane in shape (runChaos recognises a running one by its class) over envtest: a pause black-holes
 * the proxy's connections, both restarts restart envtest keeping its state, compaction compacts its history.
 */
function standIn(server: ApiServer, proxy: FaultProxy, calls: Call[]): RealControlPlane {
  const admin: RestConfig = {
    host: server.url,
    tlsClientConfig: { caData: server.caPem },
    bearerToken: server.token,
    qps: -1,
    burst: 0,
    timeoutMs: 30_000,
    userAgent: 'real-target-test',
  };
  let paused = false;
  const cp = Object.create(RealControlPlane.prototype) as RealControlPlane;
  Object.defineProperties(cp, {
    proxy: { value: proxy },
    controlPlane: { value: undefined },
    config: { get: () => admin },
    paused: { get: () => paused },
  });
  return Object.assign(cp, {
    proxiedConfig: (): RestConfig => ({ ...admin, host: `https://127.0.0.1:${proxy.port}` }),
    pauseApiServer() {
      calls.push('pause');
      paused = true;
      proxy.partition();
    },
    resumeApiServer() {
      if (!paused) return;
      calls.push('resume');
      paused = false;
      proxy.heal();
    },
    async restartApiServer() {
      calls.push('restartApiServer');
      await server.faults.restart({ keepState: true });
    },
    async restartEtcd() {
      calls.push('restartEtcd');
      await server.faults.restart({ keepState: true });
    },
    async compactEtcd() {
      calls.push('compact');
      return Number(server.faults.compact().resourceVersion ?? 0);
    },
    clearFaults() {
      calls.push('clearFaults');
      cp.resumeApiServer();
      proxy.clear();
    },
    async stop() {
      calls.push('stop');
    },
  });
}

describe('runChaos on a running real control plane (stand-in over envtest)', () => {
  let server: ApiServer;
  let proxy: FaultProxy;
  beforeAll(async () => {
    server = await startApiServer();
    proxy = await FaultProxy.start({ targetPort: Number(new URL(server.url).port) });
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.stop();
  });

  it('applies every real fault kind, reports target real, settles with 0 lost and 0 divergent, and leaves the control plane running with its faults cleared', {
    timeout: 120_000,
  }, async () => {
    const calls: Call[] = [];
    const lines: string[] = [];
    const report = await runChaos({
      seed: 7,
      objects: 20,
      durationMs: 4000,
      // dense enough that every one of the eight kinds comes up in 4 s
      faultGapMs: 100,
      writesPerSecond: 20,
      realControlPlane: standIn(server, proxy, calls),
      log: (l) => lines.push(l),
      setup(env) {
        expect(env.server).toBeUndefined();
        expect(env.controlPlane).toBeInstanceOf(RealControlPlane);
        // the manager goes through the proxy, the traffic straight to the server
        expect(env.config.host).toBe(`https://127.0.0.1:${proxy.port}`);
        newControllerManagedBy(env.manager)
          .for(env.traffic.kind)
          .named('real-target-stand-in')
          .complete(
            env.probe.wrap(env.traffic.kind, env.manager.getClient(), { reconcile: async () => undefined }),
          );
      },
    });
    const applied = Object.keys(report.faultsApplied);
    expect(report.target).toBe('real');
    expect(formatChaosReport(report)).toContain('--target real --assets <dir>');
    expect(chaosPassed(report), formatChaosReport(report)).toBe(true);
    expect(Object.keys(report.faultsFailed)).toEqual([]);
    // faults are applied one after another and the schedule is dropped once its phase is over: which kinds came
    // up depends on how long the earlier ones took (the next test applies each kind directly)
    expect(applied.length).toBeGreaterThanOrEqual(1);
    for (const k of applied) expect(REAL_FAULT_KINDS).toContain(k);
    if (report.faultsApplied.apiserverPause) {
      expect(calls).toContain('pause');
      expect(calls.filter((c) => c === 'pause').length).toBe(calls.filter((c) => c === 'resume').length);
    }
    if (report.faultsApplied.apiserverRestart) expect(calls).toContain('restartApiServer');
    if (report.faultsApplied.etcdRestart) expect(calls).toContain('restartEtcd');
    if (report.faultsApplied.compaction) expect(calls).toContain('compact');
    // handed a running control plane: its faults are cleared at the end, it is not stopped
    expect(calls.at(-1)).toBe('clearFaults');
    expect(calls).not.toContain('stop');
    expect(proxy.partitioned).toBe(false);
    expect(lines.some((l) => /faults stopped after/.test(l))).toBe(true);
  });

  it('applyRealFault makes each kind on the control plane and undoes the lasting ones', {
    timeout: 60_000,
  }, async () => {
    const calls: Call[] = [];
    const cp = standIn(server, proxy, calls);
    const at = (kind: RealFaultKind, param = 0) => applyRealFault({ atMs: 0, kind, times: 1, param }, cp);
    const accepted = proxy.acceptedConnections;
    const sock = await openThroughProxy(proxy);
    await at('apiserverPause', 50);
    expect(cp.paused).toBe(false);
    await at('apiserverRestart');
    await at('etcdRestart');
    await at('compaction');
    expect(calls).toEqual(['pause', 'resume', 'restartApiServer', 'restartEtcd', 'compact']);
    await at('partition', 50);
    expect(proxy.partitioned).toBe(false);
    await at('networkDelay', 10);
    await at('connectionDrop');
    const sock2 = await openThroughProxy(proxy);
    await at('connectionReset');
    expect(proxy.acceptedConnections).toBe(accepted + 2);
    expect(proxy.openConnections).toBe(0);
    sock.destroy();
    sock2.destroy();
  });

  it('a real control plane that cannot start fails the run with what the folder lacks, and the run leaves nothing behind', async () => {
    const listeners = process.listenerCount('unhandledRejection');
    await expect(
      runChaos({ realControlPlane: { assetsDir: '/nonexistent-kubeloop-assets' }, setup() {} }),
    ).rejects.toThrow('real control plane: /nonexistent-kubeloop-assets has no kube-apiserver and etcd');
    expect(process.listenerCount('unhandledRejection')).toBe(listeners);
  });

  it('refuses an envtest fault kind on a real control plane, naming the allowed ones', async () => {
    await expect(
      runChaos({ realControlPlane: standIn(server, proxy, []), faults: ['watchDrop' as never], setup() {} }),
    ).rejects.toThrow(/watchDrop cannot be made on a real control plane; allowed: apiserverPause/);
  });
});
