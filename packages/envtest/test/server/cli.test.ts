import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('kubeloop-envtest serve', () => {
  it('prints one ready JSON line, serves with the written kubeconfig and exits 0 on SIGTERM', async () => {
    // the bin runs from dist: build this package (incremental; fast when up to date)
    execFileSync(
      process.execPath,
      [join(pkgDir, '..', '..', 'node_modules', 'typescript', 'bin', 'tsc'), '-b', pkgDir],
      {
        stdio: 'inherit',
      },
    );
    const dir = await mkdtemp(join(tmpdir(), 'envtest-cli-'));
    const kubeconfig = join(dir, 'kc');
    const child = spawn(
      process.execPath,
      [join(pkgDir, 'dist', 'cli.js'), 'serve', '--kubeconfig', kubeconfig],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line; got ${out}`)), 20_000);
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const i = out.indexOf('\n');
        if (i >= 0) {
          clearTimeout(timer);
          resolve(out.slice(0, i));
        }
      });
    });
    const ready = JSON.parse(line) as { ready: boolean; url: string; kubeconfig: string; adminUrl?: string };
    expect(ready.ready).toBe(true);
    expect(ready.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(ready.kubeconfig).toBe(kubeconfig);
    expect(ready.adminUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await stat(kubeconfig)).mode & 0o777).toBe(0o600);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 60_000);

  it('refuses a missing --kubeconfig with exit code 2', async () => {
    const child = spawn(process.execPath, [join(pkgDir, 'dist', 'cli.js'), 'serve'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(code).toBe(2);
    expect(err).toContain('--kubeconfig');
  });
});
