import { type ApiClient, Namespace, newClient } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { type ApiServer, type ApiServerOptions, startApiServer } from '@kubeloop/envtest';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { uniqueName } from '../support.js';

/**
 * Fault injection exists only for the in-process server: the fault cases are skipped when the run targets a
 * real cluster (`USE_EXISTING_CLUSTER=true`), as reflector-faults.test.ts does.
 */
export const realCluster = process.env.USE_EXISTING_CLUSTER === 'true';

/** What {@link useFaultServer} gives a test file; fields are set once `beforeAll` has run. */
export interface FaultServerContext {
  server: ApiServer;
  /** Config of the in-process server: no client-side limiter, no timeout. */
  config: RestConfig;
  /** An unthrottled client for setup and checks. */
  api: ApiClient;
  /** Run after each test (last in, first out); the fault rules are reset after each test too. */
  cleanups: Array<() => Promise<void>>;
  /** A fresh namespace named after `prefix`. */
  namespace(prefix: string): Promise<string>;
}

/**
 * Starts one in-process API server for the calling `describe` block (call it inside the block): the shared
 * "own envtest ApiServer + RestConfig + client" setup of the fault-injection files. `serverOptions` go to
 * `startApiServer` (extra bearer tokens, TLS SANs, ...).
 */
export function useFaultServer(userAgent: string, serverOptions: ApiServerOptions = {}): FaultServerContext {
  const ctx = {
    cleanups: [] as Array<() => Promise<void>>,
    async namespace(prefix: string) {
      const ns = uniqueName(prefix);
      await ctx.api.create(Namespace, { metadata: { name: ns } });
      return ns;
    },
  } as FaultServerContext;
  beforeAll(async () => {
    ctx.server = await startApiServer(serverOptions);
    ctx.config = {
      host: ctx.server.url,
      tlsClientConfig: { caData: ctx.server.caPem },
      bearerToken: ctx.server.token,
      qps: -1,
      burst: 0,
      timeoutMs: 0,
      userAgent,
    };
    ctx.api = newClient(ctx.config);
  });
  afterEach(async () => {
    ctx.server.faults.reset();
    while (ctx.cleanups.length) await ctx.cleanups.pop()!();
  });
  afterAll(async () => {
    await ctx.api?.close();
    await ctx.server?.stop();
  });
  return ctx;
}
