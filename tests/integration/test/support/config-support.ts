// Helpers for the config integration tests: temp folders, kubeconfig files, exec plugins, waiting.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function tempDir(prefix: string): { dir: string; cleanup(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Write a one-context kubeconfig (JSON, which is YAML too; mode 0600) and return its path. */
export function writeKubeconfig(
  file: string,
  cluster: Record<string, unknown>,
  user: Record<string, unknown>,
): string {
  fs.writeFileSync(
    file,
    JSON.stringify(
      {
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'test',
        clusters: [{ name: 'test', cluster }],
        users: [{ name: 'test', user }],
        contexts: [{ name: 'test', context: { cluster: 'test', user: 'test' } }],
      },
      null,
      2,
    ),
    { mode: 0o600 },
  );
  return file;
}

export interface PluginRun {
  readonly n: number;
  readonly args: string[];
  readonly env: Record<string, string | undefined>;
  readonly info: Record<string, unknown>;
  /** When the plugin printed its credential (ms since the epoch). */
  readonly at: number;
  /** The expirationTimestamp it printed, if any. */
  readonly expiresAt?: string;
}

/**
 * Write an exec credential plugin (a node script) into `dir`. Run number n prints the token `${prefix}-${n}`,
 * expiring `expiresInMs` after it ran (none when undefined), and logs its args, the env vars named in
 * `envNames` and KUBERNETES_EXEC_INFO to a JSON-lines file.
 */
export function writeExecPlugin(
  dir: string,
  options: { prefix: string; expiresInMs?: number; envNames?: string[]; delayMs?: number },
): { command: string; runs(): PluginRun[] } {
  const command = path.join(dir, `${options.prefix}-plugin.mjs`);
  const log = path.join(dir, `${options.prefix}-plugin.log`);
  fs.writeFileSync(
    command,
    `#!${process.execPath}
import fs from 'node:fs';
const log = ${JSON.stringify(log)};
const n = (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\\n').filter(Boolean).length : 0) + 1;
const env = {};
for (const k of ${JSON.stringify(options.envNames ?? [])}) env[k] = process.env[k];
const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO);
setTimeout(() => {
  const at = Date.now();
  const status = { token: ${JSON.stringify(options.prefix)} + '-' + n };
  ${options.expiresInMs === undefined ? '' : `status.expirationTimestamp = new Date(at + ${options.expiresInMs}).toISOString();`}
  fs.appendFileSync(log, JSON.stringify({ n, args: process.argv.slice(2), env, info, at, expiresAt: status.expirationTimestamp }) + '\\n');
  process.stdout.write(JSON.stringify({ apiVersion: info.apiVersion, kind: 'ExecCredential', status }));
}, ${options.delayMs ?? 100});
`,
    { mode: 0o755 },
  );
  return {
    command,
    runs: () =>
      fs.existsSync(log)
        ? fs
            .readFileSync(log, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as PluginRun)
        : [],
  };
}

/** Poll `cond` every 20 ms until it is true; fail after `timeoutMs`. */
export async function waitUntil(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
