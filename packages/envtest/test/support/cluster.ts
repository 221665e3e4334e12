/**
 * A fresh envtest server for one conformance test file, plus small HTTPS helpers to read the server state
 * directly (undici, trusting the server's CA, with the bearer token from its RestConfig).
 */
import { Agent, type Dispatcher, request } from 'undici';
import { Environment, type EnvironmentOptions } from '../../src/index.js';
import type { WireTarget } from './battery.js';

/** JSON read back from the server in assertions (deliberately loose: tests index into it freely). */
// biome-ignore lint/suspicious/noExplicitAny: assertion-side JSON, checked by the expectations themselves
export type ServerJson = any;

export interface TestCluster extends WireTarget {
  /** Path of the kubeconfig file the environment wrote. */
  readonly kubeconfigPath: string;
  /** PEM of the CA that signed the server certificate. */
  readonly caPem: string;
  /** The requests the server has served so far (method, path, raw query), oldest first. */
  requests(): ReadonlyArray<{ readonly method: string; readonly path: string; readonly query: string }>;
  /** Number of watch streams the server has open right now. */
  activeWatches(): number;
  /** Shrinks the watch history window to `n` events (as the API server's watch cache). */
  setWatchHistoryLimit(n: number): void;
  /** GET `path` as JSON; returns the status and the parsed body. */
  get(path: string): Promise<{ status: number; body: ServerJson }>;
  /** Sends `body` (JSON) with `method` and `contentType`; returns the status and the parsed body. */
  send(
    method: string,
    path: string,
    body: unknown,
    contentType?: string,
  ): Promise<{ status: number; body: ServerJson }>;
  stop(): Promise<void>;
}

/**
 * Starts a fresh in-process envtest server (HTTPS, token auth) for a test file. These suites test envtest's own
 * server, so `USE_EXISTING_CLUSTER` / `KUBEBUILDER_ASSETS` in the environment are deliberately ignored.
 */
export async function startCluster(options: EnvironmentOptions = {}): Promise<TestCluster> {
  const env = new Environment({ env: {}, ...options });
  const config = await env.start();
  const embedded = () => {
    const server = env.server;
    if (!server)
      throw new Error(
        'this test needs the embedded envtest server (its store knobs), not an external cluster',
      );
    return server;
  };
  const caPem = config.tlsClientConfig.caData ?? '';
  const dispatcher: Dispatcher = new Agent({
    connect: { ca: caPem },
    headersTimeout: 20_000,
    bodyTimeout: 20_000,
  });
  const token = config.bearerToken;
  const baseUrl = config.host;
  const headers = (extra: Record<string, string> = {}): Record<string, string> => ({
    accept: 'application/json',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    ...extra,
  });
  const decode = async (res: Dispatcher.ResponseData) => {
    const text = await res.body.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.statusCode, body };
  };
  return {
    baseUrl,
    token,
    dispatcher,
    caPem,
    kubeconfigPath: env.kubeconfigPath,
    compact: async () => {
      embedded().store.compact();
    },
    activeWatches: () => embedded().activeWatches(),
    requests: () => embedded().requestLog,
    setWatchHistoryLimit: (n) => embedded().store.setWatchHistoryLimit(n),
    get: async (path) => decode(await request(new URL(path, baseUrl), { headers: headers(), dispatcher })),
    send: async (method, path, body, contentType = 'application/json') =>
      decode(
        await request(new URL(path, baseUrl), {
          method: method as Dispatcher.HttpMethod,
          headers: headers({ 'content-type': contentType }),
          body: typeof body === 'string' ? body : JSON.stringify(body),
          dispatcher,
        }),
      ),
    stop: async () => {
      await env.stop();
      await dispatcher.close();
    },
  };
}
