import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { podCounterCli as cli, jsonLogRecords } from './support/pod-counter-cli.js';

/** How one run ended: exit code or killing signal, whether the awaited line came, and what it wrote. */
interface Ending {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly sawLine: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `pod-counter --embedded` (what `npm run demo` runs) and sends `sig` synchronously inside the stdout
 * callback that delivers the log line `msg`: the earliest moment a caller waiting for that line can signal.
 * SIGKILLed after 90 s without an exit, so a hung stop ends the test instead of hanging it.
 */
function signalOnLine(
  msg: string,
  sig: NodeJS.Signals,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Ending> {
  const child = spawn(
    process.execPath,
    [
      cli,
      '--embedded',
      '--metrics-bind-address',
      '127.0.0.1:0',
      '--health-probe-bind-address',
      '127.0.0.1:0',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env },
  );
  let stdout = '';
  let stderr = '';
  let sawLine = false;
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    if (!sawLine && stdout.includes(`"msg":${JSON.stringify(msg)}`)) {
      sawLine = true;
      child.kill(sig);
    }
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const watchdog = setTimeout(() => child.kill('SIGKILL'), 90_000);
  return new Promise((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(watchdog);
      resolve({ code, signal, sawLine, stdout, stderr });
    }),
  );
}

describe('npm run demo (pod-counter --embedded): every line that prints a URL comes after the signal handlers', () => {
  it('stops cleanly (exit 0, not killed) on a signal sent the instant it prints the API server URL, and the metrics and probe URLs', async () => {
    expect(existsSync(cli), `${cli} must be built (npm test builds it first)`).toBe(true);
    // The two lines that carry URLs a user or a script acts on; both processes at once to keep the run short.
    const [api, probes] = await Promise.all([
      signalOnLine('embedded API server started', 'SIGTERM'),
      signalOnLine('serving metrics and probes', 'SIGINT'),
    ]);
    for (const [what, e] of [
      ['SIGTERM on the API server URL', api],
      ['SIGINT on the metrics and probe URLs', probes],
    ] as const) {
      expect({ what, sawLine: e.sawLine, code: e.code, signal: e.signal }, e.stderr).toEqual({
        what,
        sawLine: true,
        code: 0,
        signal: null,
      });
      expect(jsonLogRecords(e.stdout).map((r) => r.msg)).toContain('pod-counter stopped');
    }
  }, 120_000);

  it('--embedded runs its own API server even when the environment names a cluster (USE_EXISTING_CLUSTER, KUBEBUILDER_ASSETS)', async () => {
    // The demo creates and deletes pods: pointed at the cluster of USE_EXISTING_CLUSTER=true it filled a real
    // cluster with churn (and failed there with "pods demo-1 already exists" on the second run).
    const e = await signalOnLine('embedded API server started', 'SIGTERM', {
      ...process.env,
      USE_EXISTING_CLUSTER: 'true',
      KUBECONFIG: '/nonexistent/kubeconfig',
      KUBEBUILDER_ASSETS: '/nonexistent/assets',
    });
    expect({ sawLine: e.sawLine, code: e.code, signal: e.signal }, e.stderr).toEqual({
      sawLine: true,
      code: 0,
      signal: null,
    });
    const started = jsonLogRecords<{ msg: string; kubeconfig?: string }>(e.stdout).find(
      (r) => r.msg === 'embedded API server started',
    );
    expect(String(started?.kubeconfig)).not.toBe('/nonexistent/kubeconfig');
  }, 120_000);
});
