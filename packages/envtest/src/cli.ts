#!/usr/bin/env node
/**
 * `kubeloop-envtest serve --kubeconfig <path> [--port <n>] [--crd-dir <dir>]...`
 *
 * Starts the in-process API server on 127.0.0.1, writes the kubeconfig (mode 0600), starts the
 * loopback-only fault-injection admin endpoint, prints one JSON line
 * `{"ready":true,"url":...,"kubeconfig":...,"adminUrl":...}` to stdout and runs until SIGINT/SIGTERM.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startAdminServer } from './admin.js';
import { startApiServer } from './api-server.js';
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
  process.stdout.write(
    `${JSON.stringify({ ready: true, url, kubeconfig: kubeconfigPath, adminUrl: admin.url })}\n`,
  );
  await new Promise<void>((done) => {
    const onSignal = () => done();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  });
  await admin.close();
  await stopServer();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`kubeloop-envtest: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
