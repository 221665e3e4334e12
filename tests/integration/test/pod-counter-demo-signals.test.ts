import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { podCounterCli as cli, jsonLogRecords } from './support/pod-counter-cli.js';

/**
 * Each test's budget. A demo's start (an in-process API server, its pods, the manager) is CPU-bound: alone at load
 * average 20-25 it took 15-65 s, and in a whole-suite run beside other files it once went past a 90 s watchdog.
 */
const TIMEOUT_MS = 180_000;
/** A run still going this long is SIGKILLed, leaving the test time to say where it was. */
const WATCHDOG_MS = TIMEOUT_MS - 15_000;

/** How one run ended: exit code or killing signal, whether the awaited line came, and what it wrote. */
interface Ending {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly sawLine: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

/** What a failed assertion shows: the watchdog's kill if it came, stderr and the last log lines. */
function explain(e: Ending): string {
  const last = e.stdout.trimEnd().split('\n').slice(-3).join('\n');
  const killed = e.signal === 'SIGKILL' ? `SIGKILLed by the watchdog after ${WATCHDOG_MS / 1000} s\n` : '';
  return `${killed}stderr: ${e.stderr}\nlast stdout lines:\n${last}`;
}

/**
 * Runs `pod-counter --embedded` (what `npm run demo` runs) and sends `sig` synchronously inside the stdout
 * callback that delivers the log line `msg`: the earliest moment a caller waiting for that line can signal.
 * SIGKILLed after {@link WATCHDOG_MS} without an exit, so a hung stop ends the test instead of hanging it.
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
  const watchdog = setTimeout(() => child.kill('SIGKILL'), WATCHDOG_MS);
  return new Promise((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(watchdog);
      resolve({ code, signal, sawLine, stdout, stderr });
    }),
  );
}

describe('npm run demo (pod-counter --embedded): every line that prints a URL comes after the signal handlers', () => {
  it('stops cleanly (exit 0, not killed) on a signal sent the instant it prints the API server URL, and the metrics and probe URLs', {
    timeout: TIMEOUT_MS,
  }, async () => {
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
      expect({ what, sawLine: e.sawLine, code: e.code, signal: e.signal }, explain(e)).toEqual({
        what,
        sawLine: true,
        code: 0,
        signal: null,
      });
      expect(jsonLogRecords(e.stdout).map((r) => r.msg)).toContain('pod-counter stopped');
    }
  });

  it('--embedded runs its own API server even when the environment names a cluster (USE_EXISTING_CLUSTER, KUBEBUILDER_ASSETS)', {
    timeout: TIMEOUT_MS,
  }, async () => {
    // The demo creates and deletes pods: pointed at the cluster of USE_EXISTING_CLUSTER=true it filled a real
    // cluster with churn (and failed there with "pods demo-1 already exists" on the second run).
    const e = await signalOnLine('embedded API server started', 'SIGTERM', {
      ...process.env,
      USE_EXISTING_CLUSTER: 'true',
      KUBECONFIG: '/nonexistent/kubeconfig',
      KUBEBUILDER_ASSETS: '/nonexistent/assets',
    });
    expect({ sawLine: e.sawLine, code: e.code, signal: e.signal }, explain(e)).toEqual({
      sawLine: true,
      code: 0,
      signal: null,
    });
    const started = jsonLogRecords<{ msg: string; kubeconfig?: string }>(e.stdout).find(
      (r) => r.msg === 'embedded API server started',
    );
    expect(String(started?.kubeconfig)).not.toBe('/nonexistent/kubeconfig');
  });
});
