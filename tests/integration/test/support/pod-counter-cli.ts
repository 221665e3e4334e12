// Running the built pod-counter CLI (apps/pod-counter/dist/cli.js; npm test builds it first) as a child process.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

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

/** Runs the CLI with `args` until it exits. Rejects only when the process cannot be started. */
export function runPodCounter(args: readonly string[]): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [podCounterCli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
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

/** The JSON log records among `stdout`'s lines (lines that are not JSON objects are skipped). */
export function jsonLogRecords<T extends { msg: string }>(stdout: string): T[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as T);
}
