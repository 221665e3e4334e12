/**
 * vitest setup file of every project (root vitest.config.ts): a `MaxListenersExceededWarning` emitted while a
 * test file runs fails that file (issue 16 item 8: no long-lived signal or emitter may collect a listener per
 * request, informer or worker). The failure carries the warning's stack, which names the `addEventListener` /
 * `on` call that crossed the limit (what `node --trace-warnings` prints).
 */
import { afterAll } from 'vitest';

const seen: Error[] = [];
const onWarning = (warning: Error): void => {
  if (warning.name === 'MaxListenersExceededWarning') seen.push(warning);
};
process.on('warning', onWarning);

afterAll(async () => {
  // process.emitWarning delivers on the next tick: let a warning of the last test arrive.
  await new Promise((resolve) => setImmediate(resolve));
  process.off('warning', onWarning);
  const first = seen.splice(0)[0];
  if (first)
    throw new Error(
      `MaxListenersExceededWarning during this test file: ${first.message}\n${first.stack ?? ''}`,
      {
        cause: first,
      },
    );
});
