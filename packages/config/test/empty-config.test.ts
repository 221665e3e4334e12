import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KubeconfigError, loadRestConfig } from '../src/index.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeloop-empty-config-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('KUBECONFIG that is empty except for current-context (clientcmd.IsConfigEmpty)', () => {
  it('names the missing context instead of "no configuration found"', () => {
    const file = path.join(dir, 'only-current.yaml');
    fs.writeFileSync(
      file,
      'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\ncurrent-context: nope\n',
    );
    let err: unknown;
    try {
      loadRestConfig({ env: { KUBECONFIG: file }, argv: [] });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KubeconfigError);
    expect((err as Error).message).toMatch(/context "nope" not found/);
  });

  it('a file with nothing at all is still "no configuration found"', () => {
    const file = path.join(dir, 'nothing.yaml');
    fs.writeFileSync(file, 'apiVersion: v1\nkind: Config\n');
    expect(() => loadRestConfig({ env: { KUBECONFIG: file }, argv: [] })).toThrow(
      /no configuration found in KUBECONFIG/,
    );
  });
});
