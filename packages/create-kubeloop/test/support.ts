import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CreateIo, runCreateKubeloop } from '../src/cli-main.js';

/** The repository root (the rendered projects resolve @kubeloop/*, typebox and vitest from its node_modules). */
export const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

/** A new empty folder under the OS temp dir (for tests that only write files). */
export function tempDir(prefix: string): string {
  return mkdtempSync(path.join(tmpdir(), `create-kubeloop-${prefix}-`));
}

/**
 * A new empty folder inside this package (`.render/`, git-ignored), so a project rendered there resolves the
 * workspace's @kubeloop packages and the repository's typescript, vitest and typebox as an installed project would.
 */
export function renderDir(prefix: string): string {
  const base = fileURLToPath(new URL('../.render', import.meta.url));
  mkdirSync(base, { recursive: true });
  return mkdtempSync(path.join(base, `${prefix}-`));
}

/** Runs the CLI in `cwd`; returns the exit code and what it printed. */
export async function cli(
  cwd: string,
  ...argv: string[]
): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CreateIo = { cwd, stdout: (t) => out.push(t), stderr: (t) => err.push(t) };
  const code = await runCreateKubeloop(argv, io);
  return { code, out: out.join(''), err: err.join('') };
}

/** Every file under `dir` with its contents (relative paths, sorted): a snapshot to compare before/after. */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const full = path.join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else out[path.relative(dir, full)] = readFileSync(full, 'utf8');
    }
  };
  walk(dir);
  return out;
}
