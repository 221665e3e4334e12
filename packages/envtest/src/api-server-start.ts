/**
 * Making an API server: {@link startApiServer} (HTTPS on loopback with its own CA and a kubeconfig) and
 * {@link createInProcessApiServer} (no listener, served in process only).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ApiServer, type ApiServerOptions, serverLifecycle } from './api-server.js';
import { CertificateAuthority } from './certs.js';
import { EnvtestError } from './errors.js';

/**
 * An API server with no listener, certificate or kubeconfig, served only through
 * {@link ApiServer.serveInProcess}: the same registry, store, watch caches, fault injector and request log as
 * {@link startApiServer}'s, so every semantic (status subresource, generation, finalizers, selectors,
 * server-side apply, validation, defaulting, watch) is the same code. Created synchronously and cheaply (no
 * key generation, no file): the base of `@kubeloop/testing`'s fake client. Call `stop()` when done (ends
 * watches, stops the progress-notify timer, which is unref'ed). `url` and `caPem` stay `''`;
 * `issueClientCertificate` is refused (`ENVTEST_NO_TLS`); `restart()` drops every watch and in-flight
 * answer as a restart does, without listening.
 */
export function createInProcessApiServer(options: InProcessApiServerOptions = {}): ApiServer {
  return serverLifecycle.create(options, undefined, undefined, '');
}

/** Options of {@link createInProcessApiServer}: the server's semantics, without the listener's. */
export type InProcessApiServerOptions = Omit<ApiServerOptions, 'port' | 'host' | 'tls' | 'kubeconfigPath'>;

/**
 * Start an in-process API server on 127.0.0.1 over HTTPS and write its kubeconfig.
 * @throws EnvtestError `ENVTEST_START_FAILED` when the port cannot be bound.
 */
export async function startApiServer(options: ApiServerOptions = {}): Promise<ApiServer> {
  const host = options.host ?? '127.0.0.1';
  if (!['127.0.0.1', 'localhost', '::1'].includes(host))
    throw new EnvtestError('ENVTEST_BAD_OPTIONS', `the API server only listens on loopback, not ${host}`);
  const ca = await CertificateAuthority.create();
  const serving = await ca.issueServing(options.tls?.sans ?? ['127.0.0.1', 'localhost']);
  const tempDir = options.kubeconfigPath ? undefined : await mkdtemp(join(tmpdir(), 'kubeloop-envtest-'));
  const kubeconfigPath = options.kubeconfigPath ?? join(tempDir!, 'kubeconfig');
  const server = serverLifecycle.create(options, ca, serving, kubeconfigPath, tempDir);
  try {
    await serverLifecycle.listen(server, options.port ?? 0);
  } catch (e) {
    throw new EnvtestError(
      'ENVTEST_START_FAILED',
      `cannot listen on ${host}:${options.port ?? 0}: ${(e as Error).message}`,
      { cause: e },
    );
  }
  await server.writeKubeconfig();
  return server;
}
