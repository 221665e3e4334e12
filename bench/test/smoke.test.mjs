// Smoke test of the bench (part of `npm test`): every suite of bench/ runs each of its scenarios once, at a tiny
// size (BENCH_SMOKE=1), in this one test process (see smoke-lib.mjs), so a broken scenario — a renamed API, a
// replay server that no longer answers, a summary that throws — fails CI; and one suite goes through the real
// runner (run.mjs → child process) so the runner's plumbing is covered too. Nothing about time is asserted.
// One file, one process: the stack and @kubernetes/client-node are imported once, not once per suite.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, smokeSuite, suites } from './smoke-lib.mjs';

describe('bench smoke', () => {
  it('finds every scenario of the targets table in the bench README', () => {
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
  });
});

// every suite folder, found by listing bench/: a new suite is smoke-tested without touching this file
for (const suite of suites) smokeSuite(suite);

describe('bench runner', () => {
  let prev;
  beforeAll(() => {
    prev = process.exitCode;
  });
  afterAll(() => {
    process.exitCode = prev;
  });
  it('run.mjs runs a suite in child processes and prints one JSON line per result plus its ratio line', async () => {
    // limiter: one task, so one child process
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
