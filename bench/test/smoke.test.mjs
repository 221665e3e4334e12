// Smoke test of the bench (part of `npm test`): every suite issue 11 lists exists and has its own smoke file
// (smoke-<suite>.test.mjs, which runs each of its scenarios once at a tiny size: see smoke-lib.mjs), and one
// suite goes through the real runner (run.mjs → child process) so the runner's plumbing is covered too.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, suites } from './smoke-lib.mjs';

describe('bench smoke', () => {
  it('finds the scenarios issue 11 lists, each with its smoke test file', () => {
    for (const s of [
      'informer-sync',
      'watch-throughput',
      'cache-read',
      'workqueue',
      'limiter',
      'e2e-reconcile',
      'startup-backlog',
      'h2-watches',
    ])
      expect(suites).toContain(s);
    for (const s of suites) expect(existsSync(join(root, 'test', `smoke-${s}.test.mjs`)), s).toBe(true);
  });
});

describe('bench runner', () => {
  let prev;
  beforeAll(() => {
    prev = process.exitCode;
  });
  afterAll(() => {
    process.exitCode = prev;
  });
  it('run.mjs runs a suite in child processes and prints one JSON line per result plus its ratio line', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', join(root, 'run.mjs'), 'limiter', '--json', '--repeat', '1'],
      { cwd: root, env: { ...process.env, BENCH_SMOKE: '1' }, timeout: 60_000 },
    );
    const lines = stdout
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    expect(lines.some((l) => l.impl === 'kubeloop-client' && l.requestsInWindow > 0)).toBe(true);
    expect(lines.some((l) => 'ratio' in l)).toBe(true);
  });
});
