// The suite's own MaxListenersExceededWarning guard (scripts/vitest/fail-on-max-listeners.ts), run by a child
// vitest on generated files the way this project runs them (`isolate: false`, one worker): against a real
// cluster most fault-injection files skip entirely, and a guard that leaked one `process` listener per skipped
// file failed an unrelated file with "11 warning listeners added to [process]". The guard must still fail the
// file that really leaks listeners.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const projectDir = fileURLToPath(new URL('..', import.meta.url));
const repoRoot = path.resolve(projectDir, '../..');
const guard = path.join(repoRoot, 'scripts/vitest/fail-on-max-listeners.ts');
const vitestCli = path.join(repoRoot, 'node_modules/vitest/vitest.mjs');
// Inside the repository, so the generated files resolve `vitest` from its node_modules.
const dir = mkdtempSync(path.join(projectDir, '.listener-guard-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface JsonReport {
  testResults: Array<{ name: string; status: string; message: string }>;
}

describe('the MaxListeners guard of the test setup', () => {
  it('leaves no process listener behind for files whose tests all skip, and still fails a file that leaks', async () => {
    mkdirSync(path.join(dir, 't'));
    const skipped =
      "import { describe, it } from 'vitest';\ndescribe.skip('s', () => { it('x', () => {}); });\n";
    for (let i = 0; i < 12; i++) writeFileSync(path.join(dir, 't', `skipped-${i}.test.ts`), skipped);
    writeFileSync(
      path.join(dir, 't', 'runs.test.ts'),
      "import { expect, it } from 'vitest';\nit('runs', () => { expect(1).toBe(1); });\n",
    );
    writeFileSync(
      path.join(dir, 't', 'leaks.test.ts'),
      [
        "import { EventEmitter } from 'node:events';",
        "import { it } from 'vitest';",
        "it('leaks', () => { const e = new EventEmitter(); for (let i = 0; i < 11; i++) e.on('x', () => {}); });",
        '',
      ].join('\n'),
    );
    writeFileSync(
      path.join(dir, 'vitest.config.ts'),
      [
        "import { defineConfig } from 'vitest/config';",
        'export default defineConfig({',
        `  test: { include: ['t/*.test.ts'], isolate: false, maxWorkers: 1, setupFiles: [${JSON.stringify(guard)}] },`,
        '});',
        '',
      ].join('\n'),
    );
    const report = path.join(dir, 'report.json');
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST')));
    const run = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [vitestCli, 'run', '--root', dir, '--reporter=json', `--outputFile=${report}`],
        { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let output = '';
      child.stdout.on('data', (d) => {
        output += d;
      });
      child.stderr.on('data', (d) => {
        output += d;
      });
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, output }));
    });
    const results = (JSON.parse(readFileSync(report, 'utf8')) as JsonReport).testResults;
    const status = (file: string) => results.find((r) => r.name.endsWith(`/t/${file}`));
    expect(status('runs.test.ts')?.status, run.output).toBe('passed');
    expect(status('leaks.test.ts')?.status, run.output).toBe('failed');
    expect(status('leaks.test.ts')?.message).toContain('MaxListenersExceededWarning during this test file');
    expect(status('leaks.test.ts')?.message).toContain('11 x listeners');
    expect(run.output).not.toContain('listeners added to [process]');
    expect(run.code).toBe(1);
  });
});
