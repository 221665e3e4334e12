import { Transport } from '@kubeloop/client/transport';
import type { RestConfig } from '@kubeloop/config';
import { withDeadline } from '@kubeloop/core';

/** How long the start-up reachability check waits for the API server, in ms. */
export const REACHABILITY_TIMEOUT_MS = 15_000;

/**
 * Asks the API server for `/version` once, so that a wrong address, a server that is down or refused
 * credentials fail at start with one clear error instead of a cache that never syncs.
 * @throws Error `cannot reach the API server at <host>: <reason>` (no credentials in it).
 */
export async function checkReachable(config: RestConfig, signal: AbortSignal): Promise<void> {
  const transport = new Transport(config, { maxRetries: 1 });
  const deadline = withDeadline(signal, REACHABILITY_TIMEOUT_MS);
  try {
    const res = await transport.request({ method: 'GET', path: '/version', signal: deadline.signal });
    await res.body.dump();
    if (res.status === 401 || res.status === 403) {
      throw new Error(`the API server at ${config.host} refused the credentials (HTTP ${res.status})`);
    }
    if (res.status >= 400) throw new Error(`the API server at ${config.host} answered HTTP ${res.status}`);
  } catch (err) {
    if (signal.aborted) return;
    const reason = deadline.timedOut
      ? `no answer within ${REACHABILITY_TIMEOUT_MS / 1000} s`
      : err instanceof Error
        ? err.message
        : String(err);
    if (err instanceof Error && err.message.startsWith('the API server at')) throw err;
    throw new Error(`cannot reach the API server at ${config.host}: ${reason}`, { cause: err });
  } finally {
    deadline.dispose();
    await transport.close();
  }
}
