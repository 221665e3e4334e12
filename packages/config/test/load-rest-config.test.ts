import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { getConfigOrDie, KubeconfigError, loadRestConfig } from '../src/index.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeloop-config-smoke-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const p = path.join(dir, name);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, text);
  return p;
}

describe('loadRestConfig (smoke)', () => {
  it('loads an explicit kubeconfig with a token, defaults QPS/burst and redacts on inspect', () => {
    const file = write(
      'a.yaml',
      `apiVersion: v1
kind: Config
current-context: a
clusters: [{name: a, cluster: {server: "https://127.0.0.1:6443/prefix/"}}]
users: [{name: a, user: {token: secret-token-value}}]
contexts: [{name: a, context: {cluster: a, user: a}}]
`,
    );
    const cfg = loadRestConfig({ kubeconfig: file, argv: ['node', '/x/my-app.js'], env: {} });
    expect(cfg.host).toBe('https://127.0.0.1:6443/prefix');
    expect(cfg.bearerToken).toBe('secret-token-value');
    expect(cfg.qps).toBe(20);
    expect(cfg.burst).toBe(30);
    expect(cfg.userAgent).toMatch(/^my-app\/v0\.0\.0 \(\w+\/\w+\) kubeloop\/0\.1\.0$/);
    expect(inspect(cfg)).not.toContain('secret-token-value');
    expect(String(cfg)).not.toContain('secret-token-value');
  });

  it('reads --kubeconfig from argv and reports a missing explicit file', () => {
    const missing = path.join(dir, 'nope.yaml');
    expect(() => loadRestConfig({ argv: ['node', 'app', '--kubeconfig', missing], env: {} })).toThrow(
      new KubeconfigError('FileNotFound', 'file not found', { file: missing }),
    );
  });

  it('getConfigOrDie prints the reason and exits with status 1', () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation((code) => {
      throw new Error(`exit ${code}`);
    });
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(() =>
        getConfigOrDie({ env: {}, argv: ['node', 'app'], homeDir: path.join(dir, 'none') }),
      ).toThrow('exit 1');
      expect(stderr).toHaveBeenCalledWith(
        'error: unable to get kubeconfig: no configuration has been provided: pass --kubeconfig, set KUBECONFIG, run in a cluster or create ~/.kube/config\n',
      );
    } finally {
      exit.mockRestore();
      stderr.mockRestore();
    }
  });
});
