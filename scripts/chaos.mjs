#!/usr/bin/env node
// npm run test:chaos [-- --seed N] [--profile ci|short|long|ryow]: runs the chaos suite of @kubeloop/testing. The default
// is the ci profile that `npm test` runs, so the replay line a CI failure prints (`-- --seed N`) replays it exactly.
// The seed and profile reach the test as CHAOS_SEED / CHAOS_PROFILE; a failing run prints its seed.
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { seed: { type: 'string' }, profile: { type: 'string', default: 'ci' } },
  strict: true,
});
if (values.seed !== undefined && !/^\d+$/.test(values.seed)) {
  console.error(`--seed must be a non-negative integer, not ${JSON.stringify(values.seed)}`);
  process.exit(2);
}
if (!['ci', 'short', 'long', 'ryow'].includes(values.profile)) {
  console.error(`--profile must be ci, short, long or ryow, not ${JSON.stringify(values.profile)}`);
  process.exit(2);
}
const env = { ...process.env, CHAOS_PROFILE: values.profile };
if (values.seed !== undefined) env.CHAOS_SEED = values.seed;
const child = spawn(
  process.execPath,
  ['node_modules/vitest/vitest.mjs', 'run', '--project', '@kubeloop/testing', 'test/chaos.test.ts'],
  { stdio: 'inherit', env, cwd: new URL('..', import.meta.url) },
);
// Stopping this wrapper stops vitest, and the wrapper exits with vitest's status: Ctrl-C reaches vitest from the
// terminal already (same process group), so SIGINT only waits for it; a SIGTERM sent to the wrapper alone is
// passed on, instead of killing the wrapper and leaving vitest running.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('exit', (code) => process.exit(code ?? 1));
