#!/usr/bin/env node
// npm run test:chaos [-- --seed N] [--profile ci|short|long|ryow|multicluster] [--target envtest|real --assets <dir>]: runs the chaos
// suite of @kubeloop/testing. The default is the ci profile on envtest that `npm test` runs, so the replay line a
// CI failure prints (`-- --seed N`) replays it exactly. `--target real` runs the same controller against a real
// kube-apiserver + etcd that the harness starts from `--assets` (a folder with kube-apiserver and etcd, as
// KUBEBUILDER_ASSETS) on free ports and a temporary data dir, with process and network faults; not in CI.
// The options reach the test as CHAOS_SEED / CHAOS_PROFILE / CHAOS_TARGET / CHAOS_ASSETS; a failing run prints its
// seed. CHAOS_OBJECTS, CHAOS_DURATION_MS and CHAOS_SETTLE_MS in the environment override the profile's figures.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    profile: { type: 'string', default: 'ci' },
    target: { type: 'string', default: 'envtest' },
    assets: { type: 'string' },
  },
  strict: true,
});
if (values.seed !== undefined && !/^\d+$/.test(values.seed)) {
  console.error(`--seed must be a non-negative integer, not ${JSON.stringify(values.seed)}`);
  process.exit(2);
}
if (!['ci', 'short', 'long', 'ryow', 'multicluster'].includes(values.profile)) {
  console.error(
    `--profile must be ci, short, long, ryow or multicluster, not ${JSON.stringify(values.profile)}`,
  );
  process.exit(2);
}
if (!['envtest', 'real'].includes(values.target)) {
  console.error(`--target must be envtest or real, not ${JSON.stringify(values.target)}`);
  process.exit(2);
}
const env = { ...process.env, CHAOS_PROFILE: values.profile, CHAOS_TARGET: values.target };
if (values.target === 'real') {
  const assets = values.assets ?? process.env.KUBEBUILDER_ASSETS;
  if (!assets) {
    console.error(
      '--target real needs --assets <dir> (a folder with kube-apiserver and etcd) or KUBEBUILDER_ASSETS',
    );
    process.exit(2);
  }
  const missing = ['kube-apiserver', 'etcd'].filter((b) => !existsSync(join(assets, b)));
  if (missing.length) {
    console.error(`--assets ${assets} has no ${missing.join(' and ')}`);
    process.exit(2);
  }
  env.CHAOS_ASSETS = resolve(assets);
} else if (values.assets !== undefined) {
  console.error('--assets is for --target real');
  process.exit(2);
}
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
