import { onAbort } from '@kubeloop/core';

// One real `abort` listener per signal however many informers follow it: the client's fan-out.
export { onAbort };

/** An AbortController that aborts when `parent` does (through {@link onAbort}); `release` unlinks it. */
export function childController(parent: AbortSignal): { controller: AbortController; release: () => void } {
  const controller = new AbortController();
  const release = onAbort(parent, () => controller.abort(parent.reason));
  return { controller, release };
}
