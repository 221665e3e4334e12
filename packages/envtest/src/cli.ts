#!/usr/bin/env node
/**
 * `kubeloop-envtest serve --kubeconfig <path> [--port <n>] [--crd-dir <dir>]...`
 *
 * Starts the in-process API server on 127.0.0.1, writes the kubeconfig (mode 0600), starts the
 * loopback-only fault-injection admin endpoint, prints one JSON line
 * `{"ready":true,"url":...,"kubeconfig":...,"adminUrl":...}` to stdout and runs until SIGINT/SIGTERM.
 *
 * The first SIGINT/SIGTERM stops it cleanly (exit 0) from the moment it parses its arguments: a signal sent
 * the instant the ready line is read, or during startup (then no ready line is printed), closes both servers
 * first. A second signal exits 1 at once, as controller-runtime's `signals.SetupSignalHandler` does.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startAdminServer } from './admin.js';
import { startApiServer } from './api-server-start.js';
import { Environment } from './environment.js';

const USAGE = `usage: kubeloop-envtest serve --kubeconfig <path> [--port <n>] [--crd-dir <dir>]...

Starts an in-process Kubernetes API server (HTTPS on 127.0.0.1), writes a kubeconfig for it,
prints {"ready":true,"url":...,"kubeconfig":...,"adminUrl":...} and runs until SIGINT/SIGTERM.
`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      kubeconfig: { type: 'string' },
      port: { type: 'string' },
      'crd-dir': { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals[0] !== 'serve' || positionals.length !== 1) {
    process.stderr.write(USAGE);
    return 2;
  }
  if (!values.kubeconfig) {
    process.stderr.write('error: --kubeconfig <path> is required\n');
    return 2;
  }
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`error: --port must be an integer in 0..65535, got ${values.port}\n`);
    return 2;
  }
  const kubeconfigPath = resolve(values.kubeconfig);
  // The handlers go in before anything starts and long before the ready line: until a listener is installed
  // a SIGINT/SIGTERM has its default action and kills the process, so a caller that signals as soon as it
  // reads "ready" would see a death by signal instead of a clean stop.
  const stopRequested = onStopSignal();
  const crdDirs = values['crd-dir'] ?? [];
  let stopServer: () => Promise<void>;
  let url: string;
  let server: Parameters<typeof startAdminServer>[0];
  if (crdDirs.length > 0) {
    const env = new Environment({
      crdDirectoryPaths: crdDirs,
      errorIfCrdPathMissing: true,
      env: {},
      server: { port, kubeconfigPath },
    });
    await env.start();
    server = env.server!;
    url = env.config.host;
    stopServer = () => env.stop();
  } else {
    const api = await startApiServer({ port, kubeconfigPath });
    server = api;
    url = api.url;
    stopServer = () => api.stop();
  }
  const admin = await startAdminServer(server);
  if (!stopRequested.requested) {
    process.stdout.write(
      `${JSON.stringify({ ready: true, url, kubeconfig: kubeconfigPath, adminUrl: admin.url })}\n`,
    );
  }
  await stopRequested.promise;
  await admin.close();
  await stopServer();
  return 0;
}

/**
 * Listens for SIGINT and SIGTERM from now on. The first one settles `promise` (and sets `requested`); a second
 * one exits 1 at once, for a stop that hangs.
 */
function onStopSignal(): { readonly promise: Promise<void>; readonly requested: boolean } {
  let requested = false;
  let settle: () => void = () => {};
  const promise = new Promise<void>((resolve) => {
    settle = resolve;
  });
  const onSignal = () => {
    if (requested) process.exit(1);
    requested = true;
    settle();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    promise,
    get requested() {
      return requested;
    },
  };
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`kubeloop-envtest: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
