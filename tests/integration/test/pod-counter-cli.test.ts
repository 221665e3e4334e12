import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Pod } from '@kubeloop/client';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { liveClient, podManifest, uniqueName, waitFor, withNamespace } from './support.js';

const cli = fileURLToPath(new URL('../../../apps/pod-counter/dist/cli.js', import.meta.url));

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('pod-counter CLI (npm run pod-counter -- --kubeconfig <file>)', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  it('counts pods through a kubeconfig file and exits 0 after --duration', async () => {
    expect(existsSync(cli), `${cli} must be built (npm test builds it first)`).toBe(true);
    const api = liveClient();
    cleanups.push(() => api.close());
    const ns = uniqueName('cli');
    cleanups.push(await withNamespace(api, ns));
    for (const n of ['a', 'b']) await api.create(Pod, podManifest(ns, n));

    const res = await run(['--kubeconfig', inject('kubeconfigPath'), '--namespace', ns, '--duration', '3']);
    expect(res.code, res.stderr).toBe(0);
    const counts = res.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; count?: number })
      .filter((r) => r.msg === 'pod count')
      .map((r) => r.count);
    expect(counts.length).toBeGreaterThanOrEqual(2);
    expect(counts.at(-1)).toBe(2);
    expect(res.stdout).not.toMatch(/bearer|token/i);
  });

  it('stops cleanly on SIGINT (Ctrl-C) and exits 0', async () => {
    const api = liveClient();
    cleanups.push(() => api.close());
    const ns = uniqueName('cli-int');
    cleanups.push(await withNamespace(api, ns));
    await api.create(Pod, podManifest(ns, 'a'));
    const child = spawn(
      process.execPath,
      [cli, '--kubeconfig', inject('kubeconfigPath'), '--namespace', ns],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await waitFor(() => stdout.includes('"pod count"'), 'the first pod count line');
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stdout).toContain('"Manager stopped"');
  });

  it('rejects bad arguments with exit code 2', async () => {
    const res = await run(['--duration', 'soon']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--duration');
    const level = await run(['--log-level', 'verbose']);
    expect(level.code).toBe(2);
    expect(level.stderr).toContain('--log-level must be one of trace|debug|info|warn|error, got verbose');
    expect(level.stderr).toContain('usage: pod-counter');
  });
});
