/**
 * Running the real `kubectl` against a server: one kubeconfig, one fresh `--cache-dir` per instance
 * (kubectl caches discovery on disk; a reused cache hides CRDs created later).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The reason kubectl tests are skipped, or undefined when `kubectl` is on PATH. */
export function kubectlMissingReason(): string | undefined {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore', timeout: 20_000 });
    return undefined;
  } catch {
    return 'kubectl is not on PATH (CI installs it; see .ci/run)';
  }
}

export interface KubectlResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A `kubectl get -w`-style process whose output lines are collected as they arrive. */
export interface KubectlStream {
  readonly lines: readonly string[];
  readonly stderr: () => string;
  /**
   * Waits until a stdout line satisfies `pred`, returning it; rejects naming `what` if kubectl exits first. No
   * timer of its own: the test's timeout bounds it (a 20 s one missed kubectl's start-up at load 40).
   */
  waitForLine(pred: (line: string) => boolean, what: string): Promise<string>;
  /** Resolves with the exit code when the process ends. */
  readonly exited: Promise<number | null>;
  stop(): Promise<void>;
}

export class Kubectl {
  readonly #kubeconfig: string;
  readonly #dir: string;
  readonly #children = new Set<ChildProcess>();

  constructor(kubeconfigPath: string) {
    this.#kubeconfig = kubeconfigPath;
    this.#dir = mkdtempSync(join(tmpdir(), 'kubeloop-kubectl-'));
  }

  get #baseArgs(): string[] {
    return [
      '--kubeconfig',
      this.#kubeconfig,
      '--cache-dir',
      join(this.#dir, 'cache'),
      '--request-timeout',
      '30s',
    ];
  }

  /** Writes `content` to a file in this instance's temp folder and returns its path. */
  file(name: string, content: string): string {
    const p = join(this.#dir, name);
    writeFileSync(p, content);
    return p;
  }

  /** Runs kubectl to completion (deadline `timeoutMs`, then SIGKILL) and returns its exit code and output. */
  run(
    args: readonly string[],
    options: { stdin?: string; timeoutMs?: number; env?: Record<string, string> } = {},
  ): Promise<KubectlResult> {
    return new Promise((resolve, reject) => {
      const child = spawn('kubectl', [...this.#baseArgs, ...args], {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, HOME: this.#dir, KUBECONFIG: this.#kubeconfig, ...options.env },
      });
      this.#children.add(child);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
      });
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        this.#children.delete(child);
        resolve({ code, stdout, stderr });
      });
      child.stdin.end(options.stdin ?? '');
    });
  }

  /** Runs kubectl and throws (with its stderr) unless it exits 0; returns stdout. */
  async ok(
    args: readonly string[],
    options: { stdin?: string; timeoutMs?: number; env?: Record<string, string> } = {},
  ): Promise<string> {
    const r = await this.run(args, options);
    if (r.code !== 0) {
      throw new Error(`kubectl ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    }
    return r.stdout;
  }

  /** Starts a long-running kubectl (e.g. `get -w`) and collects its stdout lines. */
  stream(args: readonly string[]): KubectlStream {
    const child = spawn('kubectl', [...this.#baseArgs, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, HOME: this.#dir, KUBECONFIG: this.#kubeconfig },
    });
    this.#children.add(child);
    const lines: string[] = [];
    let partial = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      partial += d.toString();
      const parts = partial.split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts);
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => {
      child.on('close', (code) => {
        this.#children.delete(child);
        if (partial !== '') lines.push(partial);
        resolve(code);
      });
    });
    return {
      lines,
      stderr: () => stderr,
      exited,
      waitForLine: (pred, what) =>
        new Promise<string>((resolve, reject) => {
          let settled = false;
          const check = (): boolean => {
            const line = lines.find(pred);
            if (settled || line === undefined) return settled;
            settled = true;
            child.stdout.off('data', onData);
            resolve(line);
            return true;
          };
          // Registered after the collector above, so it runs once the new lines are in.
          const onData = () => void check();
          if (check()) return;
          child.stdout.on('data', onData);
          // `exited` resolves after the last partial line is in (and at once when kubectl ended already).
          void exited.then(() => {
            if (check()) return;
            settled = true;
            child.stdout.off('data', onData);
            reject(new Error(`kubectl ${args.join(' ')} exited before ${what} (stderr: ${stderr})`));
          });
        }),
      stop: async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited;
      },
    };
  }

  /** Kills any kubectl still running and removes the temp folder (cache dir, manifests). */
  async dispose(): Promise<void> {
    for (const c of this.#children) c.kill('SIGKILL');
    this.#children.clear();
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
