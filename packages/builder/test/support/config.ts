import type { RestConfig } from '@kubeloop/config';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, beforeAll } from 'vitest';
import type { HandlerQueue, Request, Source } from '../../src/index.js';

/** A config for tests that never reach a server (no informer is created, so no connection is opened). */
export function offlineConfig(userAgent = 'builder-test'): RestConfig {
  return { host: 'https://127.0.0.1:9', tlsClientConfig: {}, qps: -1, burst: 0, timeoutMs: 0, userAgent };
}

/** The client config of an envtest API server: its URL, CA and token, no client-side throttling. */
export function envtestConfig(server: ApiServer, userAgent: string): RestConfig {
  return {
    host: server.url,
    tlsClientConfig: { caData: server.caPem },
    bearerToken: server.token,
    qps: -1,
    burst: 0,
    timeoutMs: 0,
    userAgent,
  };
}

/**
 * Starts an in-process envtest API server for the enclosing `describe` (stopped after it). Read `server`
 * and `config` inside tests, not at collection time.
 */
export function useEnvtest(userAgent: string): { readonly server: ApiServer; readonly config: RestConfig } {
  const ctx: { server?: ApiServer; config?: RestConfig } = {};
  beforeAll(async () => {
    ctx.server = await startApiServer();
    ctx.config = envtestConfig(ctx.server, userAgent);
  });
  afterAll(async () => {
    await ctx.server?.stop();
  });
  return {
    get server() {
      if (!ctx.server) throw new Error('useEnvtest: the server starts in beforeAll');
      return ctx.server;
    },
    get config() {
      if (!ctx.config) throw new Error('useEnvtest: the server starts in beforeAll');
      return ctx.config;
    },
  };
}

/** Pushes requests straight into a controller's queue (like controller-runtime's `source.Channel`). */
export class PushSource implements Source {
  queue: HandlerQueue | undefined;
  start(_signal: AbortSignal, queue: HandlerQueue): void {
    this.queue = queue;
  }
  async waitForSync(): Promise<boolean> {
    return true;
  }
  push(...reqs: Request[]): void {
    for (const r of reqs) this.queue?.add(r);
  }
}
