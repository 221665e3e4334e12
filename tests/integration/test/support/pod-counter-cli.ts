// Running the built pod-counter CLI (apps/pod-counter/dist/cli.js; npm test builds it first) as a child process.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';

/** Path of the built CLI. */
export const podCounterCli = fileURLToPath(
  new URL('../../../../apps/pod-counter/dist/cli.js', import.meta.url),
);

/** What a finished CLI run left: its exit code and everything it wrote. */
export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A CLI process started by {@link startPodCounter}. */
export interface CliProcess {
  /** Everything it wrote to stdout so far. */
  stdout(): string;
  /** Sends it `signal` (SIGTERM by default) unless it has exited. */
  kill(signal?: NodeJS.Signals): void;
  /** Settles when it has exited and its output is closed. Rejects only when the process cannot be started. */
  readonly exited: Promise<CliRun>;
}

/** Starts the CLI with `args`, for tests that stop it on a condition instead of after a wall-clock `--duration`. */
export function startPodCounter(args: readonly string[]): CliProcess {
  const child = spawn(process.execPath, [podCounterCli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const exited = new Promise<CliRun>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return {
    stdout: () => stdout,
    kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    exited,
  };
}

/** Runs the CLI with `args` until it exits. Rejects only when the process cannot be started. */
export function runPodCounter(args: readonly string[]): Promise<CliRun> {
  return startPodCounter(args).exited;
}

/**
 * {@link startPodCounter} and {@link runPodCounter} for a test file whose processes must not outlive their test:
 * after each test, every process started through these that is still running is SIGKILLed and waited for. A test
 * that times out (or fails before its own kill) otherwise leaves its CLI running, holding ports and load, for
 * the rest of the run.
 */
export function usePodCounterProcesses(): {
  start(args: readonly string[]): CliProcess;
  run(args: readonly string[]): Promise<CliRun>;
} {
  const running = new Set<CliProcess>();
  afterEach(async () => {
    const left = [...running];
    running.clear();
    for (const p of left) p.kill('SIGKILL');
    await Promise.all(left.map((p) => p.exited.catch(() => undefined)));
  });
  const start = (args: readonly string[]) => {
    const p = startPodCounter(args);
    running.add(p);
    void p.exited.then(
      () => running.delete(p),
      () => running.delete(p),
    );
    return p;
  };
  return { start, run: (args) => start(args).exited };
}

/** The JSON log records among `stdout`'s lines (lines that are not JSON objects are skipped). */
export function jsonLogRecords<T extends { msg: string }>(stdout: string): T[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as T);
}
