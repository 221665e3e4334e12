import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LeaseKind } from '@kubeloop/builder/leaderelection';
import { ConfigMap } from '@kubeloop/client';
import { afterEach, describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { waitFor } from './support.js';

const child = fileURLToPath(new URL('./support/shutdown-child.mjs', import.meta.url));
const builtBuilder = fileURLToPath(new URL('../../../packages/builder/dist/index.js', import.meta.url));

interface Run {
  proc: ChildProcess;
  lines: Array<{ ev: string; t: number; name?: string }>;
  exit: Promise<{ code: number | null }>;
}

describe.skipIf(realCluster || !existsSync(builtBuilder))(
  'graceful shutdown of a real subprocess (SIGTERM)',
  () => {
    const ctx = useFaultServer('kubeloop-shutdown');
    const procs: ChildProcess[] = [];
    afterEach(() => {
      for (const p of procs.splice(0)) if (p.exitCode === null) p.kill('SIGKILL');
    });

    /** `reconcileMs`: how long each reconcile takes, or `'signal'`: until the child's first signal. */
    function start(ns: string, reconcileMs: number | 'signal', graceMs: number): Run {
      const proc = spawn(process.execPath, [child], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...process.env,
          HOST: ctx.config.host,
          CA: ctx.config.tlsClientConfig.caData,
          TOKEN: ctx.config.bearerToken,
          NAMESPACE: ns,
          RECONCILE_MS: String(reconcileMs),
          GRACE_MS: String(graceMs),
        },
      });
      procs.push(proc);
      const lines: Run['lines'] = [];
      let buf = '';
      proc.stdout?.on('data', (d: Buffer) => {
        buf += d.toString();
        for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
          lines.push(JSON.parse(buf.slice(0, i)));
          buf = buf.slice(i + 1);
        }
      });
      const exit = new Promise<{ code: number | null }>((resolve) =>
        proc.on('exit', (code) => resolve({ code })),
      );
      return { proc, lines, exit };
    }

    it('C24: SIGTERM during an in-flight reconcile — it finishes, its last patch lands, then the lease is released last; exit 0', async () => {
      const ns = await ctx.namespace('sigterm');
      await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'cm1' } });
      await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'cm2' } });
      // Each reconcile lasts until the signal, so one is in flight when it comes, however slow the machine.
      const run = start(ns, 'signal', 60_000);
      await waitFor(() => run.lines.some((l) => l.ev === 'reconcile-start'), 'a reconcile in flight', 30_000);
      const tSig = Date.now();
      run.proc.kill('SIGTERM');
      const { code } = await run.exit;
      expect(code).toBe(0);
      const started = run.lines.filter((l) => l.ev === 'reconcile-start');
      // No reconcile starts after the signal; the one in flight finished. Judged by the order of the child's own
      // lines (one stdout), not by timestamps: the in-flight start and this process's Date.now() at the kill can
      // fall in the same millisecond (it failed so on Node 24 in a fresh-clone CI run).
      const afterSignal = run.lines.slice(run.lines.findIndex((l) => l.ev === 'signal'));
      expect(afterSignal[0]?.ev).toBe('signal');
      expect(afterSignal.filter((l) => l.ev === 'reconcile-start')).toEqual([]);
      expect(run.lines.filter((l) => l.ev === 'reconcile-end').map((l) => l.name)).toEqual(
        started.map((l) => l.name),
      );
      // Its last patch reached the server, and only then was the lease released.
      const name = started[0]?.name ?? '';
      const patch = ctx.server.faults.requests({ verb: 'patch', namespace: ns, name }).at(-1);
      expect(patch?.status).toBe(200);
      const leaseWrites = ctx.server.faults.requests({
        resource: 'leases',
        namespace: ns,
        method: 'PUT',
        since: tSig,
      });
      const release = leaseWrites.at(-1);
      expect(release?.status).toBe(200);
      expect(patch?.time).toBeLessThan(release?.time ?? 0);
      const lease = await ctx.api.get(LeaseKind, { namespace: ns, name: 'lock' });
      expect(lease.spec?.holderIdentity).toBe('');
      expect((await ctx.api.get(ConfigMap, { namespace: ns, name })).metadata?.annotations?.done).toBe('yes');
    });

    it('a second signal exits 1 at once, even with a reconcile still running', async () => {
      const ns = await ctx.namespace('sigterm2');
      await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'slow' } });
      // The reconcile and the grace period outlast the test: exiting at all is exiting without waiting for them.
      const run = start(ns, 600_000, 600_000);
      await waitFor(
        () => run.lines.some((l) => l.ev === 'reconcile-start'),
        'the slow reconcile in flight',
        30_000,
      );
      run.proc.kill('SIGTERM');
      await waitFor(() => run.lines.some((l) => l.ev === 'signal'), 'the first signal seen');
      run.proc.kill('SIGTERM');
      const { code } = await run.exit;
      expect(code).toBe(1);
      expect(run.lines.some((l) => l.ev === 'reconcile-end')).toBe(false);
    });
  },
);
