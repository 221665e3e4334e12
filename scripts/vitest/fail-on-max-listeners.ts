/**
 * vitest setup file of every project (root vitest.config.ts): a `MaxListenersExceededWarning` emitted while a
 * test file runs fails that file (no long-lived signal or emitter may collect a listener per request, informer
 * or worker). The failure carries the warning's stack, which names the `addEventListener` / `on` call that
 * crossed the limit (what `node --trace-warnings` prints).
 *
 * The `warning` listener is added to `process` once per worker process, never once per file: a setup file runs
 * again for every test file, but `afterAll` hooks do not run for a file whose tests are all skipped, so a
 * listener added per file and removed in `afterAll` stayed behind for each skipped file. With `isolate: false`
 * and a real cluster (where most fault-injection files skip) the eleventh such listener was itself a
 * `MaxListenersExceededWarning` on `process`, failing whichever file was running. A warning emitted while a
 * skipped file is collected is reported by the next file that runs.
 */
import { afterAll } from 'vitest';

const key = Symbol.for('kubeloop.failOnMaxListeners');
const host = process as NodeJS.Process & { [key]?: Error[] };
let seen = host[key];
if (!seen) {
  const warnings: Error[] = [];
  host[key] = warnings;
  seen = warnings;
  process.on('warning', (warning: Error) => {
    if (warning.name === 'MaxListenersExceededWarning') warnings.push(warning);
  });
}
const pending = seen;

afterAll(async () => {
  // process.emitWarning delivers on the next tick: let a warning of the last test arrive.
  await new Promise((resolve) => setImmediate(resolve));
  const first = pending.splice(0)[0];
  if (first)
    throw new Error(
      `MaxListenersExceededWarning during this test file: ${first.message}\n${first.stack ?? ''}`,
      {
        cause: first,
      },
    );
});
