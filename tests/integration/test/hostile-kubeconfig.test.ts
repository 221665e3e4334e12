// Hostile input, kubeconfig side: every broken file gives a KubeconfigError that names the
// file and what is wrong — never a crash, a hang, an unbounded allocation or a raw parser stack.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeconfigError, loadRestConfigFromFiles } from '@kubeloop/config';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'kubeloop-hostile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function file(text: string | Buffer): string {
  const p = join(dir, `config-${++n}`);
  writeFileSync(p, text, { mode: 0o600 });
  return p;
}

/** A kubeconfig with one cluster/user/context; `cluster` and `user` fields replace the defaults. */
function kubeconfig(cluster: Record<string, unknown> = {}, user: Record<string, unknown> = {}): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'c',
    clusters: [{ name: 'k', cluster: { server: 'https://127.0.0.1:6443', ...cluster } }],
    users: [{ name: 'u', user: { token: 'tok', ...user } }],
    contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }],
  });
}

const billionLaughs = [
  'a: &a ["x","x","x","x","x","x","x","x","x","x"]',
  ...Array.from({ length: 9 }, (_, i) => {
    const p = String.fromCharCode(97 + i);
    const q = String.fromCharCode(98 + i);
    return `${q}: &${q} [*${p},*${p},*${p},*${p},*${p},*${p},*${p},*${p},*${p},*${p}]`;
  }),
  'clusters: *j',
].join('\n');

function loadError(path: string): KubeconfigError {
  try {
    loadRestConfigFromFiles([path]);
  } catch (e) {
    expect(e).toBeInstanceOf(KubeconfigError);
    return e as KubeconfigError;
  }
  throw new Error(`loading ${path} did not fail`);
}

describe('hostile kubeconfigs', () => {
  it.each([
    ['invalid YAML', () => 'clusters: [\n  - name: a\n    cluster: {server: "x"\n', /YAML/],
    ['wrong types (clusters is a string)', () => 'clusters: "nope"\ncurrent-context: c\n', /clusters/],
    [
      'a missing certificate-authority file',
      () => kubeconfig({ 'certificate-authority': '/nonexistent/ca.crt' }),
      /certificate-authority|ca\.crt|not found/i,
    ],
    [
      'bad base64 in certificate-authority-data',
      () => kubeconfig({ 'certificate-authority-data': '%%%not base64%%%' }),
      /certificate-authority-data|base64|PEM/i,
    ],
    [
      'bad PEM in certificate-authority-data',
      () => kubeconfig({ 'certificate-authority-data': Buffer.from('hello').toString('base64') }),
      /PEM|certificate/i,
    ],
    [
      'an unknown auth provider',
      () => kubeconfig({}, { token: undefined, 'auth-provider': { name: 'no-such-provider' } }),
      /auth.?provider|no-such-provider/i,
    ],
    ['a YAML alias bomb', () => billionLaughs, /YAML|alias/i],
  ])('%s: a KubeconfigError naming the file and the problem', (_name, text, what) => {
    const path = file(text());
    const err = loadError(path);
    expect(err.message).toMatch(what);
    expect(err.message).toContain(path);
    expect(err.message).not.toMatch(/\n\s+at /); // no stack in the message
  });

  it('a 50 MB file is refused or read without blowing up', () => {
    const big = file(`# ${'x'.repeat(50 * 1024 * 1024)}\n${kubeconfig()}`);
    const t0 = Date.now();
    let outcome: string;
    try {
      loadRestConfigFromFiles([big]);
      outcome = 'loaded';
    } catch (e) {
      expect(e).toBeInstanceOf(KubeconfigError);
      outcome = (e as Error).message;
    }
    // A hang would end at the test timeout; the time is printed as a figure, not asserted.
    console.log(`hostile: 50 MB kubeconfig → ${outcome.slice(0, 120)} in ${Date.now() - t0} ms`);
  });

  it('fuzz: any bytes as a kubeconfig give a RestConfig or a KubeconfigError, nothing else', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
          fc
            .record({
              cluster: fc.dictionary(
                fc.constantFrom(
                  'server',
                  'certificate-authority-data',
                  'insecure-skip-tls-verify',
                  'proxy-url',
                  'tls-server-name',
                ),
                fc.oneof(fc.string(), fc.boolean(), fc.integer()),
              ),
              user: fc.dictionary(
                fc.constantFrom(
                  'token',
                  'username',
                  'password',
                  'client-key-data',
                  'exec',
                  'auth-provider',
                  'tokenFile',
                ),
                fc.oneof(fc.string(), fc.boolean(), fc.integer(), fc.constant(null)),
              ),
            })
            .map(({ cluster, user }) => kubeconfig(cluster, user)),
        ),
        (text) => {
          const path = file(text);
          try {
            loadRestConfigFromFiles([path]);
          } catch (e) {
            if (!(e instanceof KubeconfigError)) throw e;
          } finally {
            rmSync(path, { force: true });
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
