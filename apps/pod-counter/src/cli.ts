#!/usr/bin/env node
/**
 * `pod-counter`: runs the PodCounter controller against a cluster (`--kubeconfig`, `--context`, or the
 * default loading order: `KUBECONFIG` → in-cluster → `~/.kube/config`), or against an embedded API server
 * it fills with churning pods (`--embedded`). `--duration <seconds>` stops it and exits 0; Ctrl-C stops it
 * cleanly at any time (a second Ctrl-C exits 1 at once).
 */
import { parseArgs } from 'node:util';
import { newLogger, setupSignalHandler } from '@kubeloop/builder';
import { newClient } from '@kubeloop/client';
import { getConfig, type RestConfig } from '@kubeloop/config';
import type { Environment } from '@kubeloop/envtest';
import { startChurn } from './churn.js';
import { runPodCounter } from './pod-counter.js';

const usage = `usage: pod-counter [--kubeconfig <path>] [--context <name>] [--namespace <ns>]
                   [--embedded] [--duration <seconds>] [--log-level <level>]

  --kubeconfig <path>   kubeconfig file (default: KUBECONFIG, in-cluster, ~/.kube/config)
  --context <name>      kubeconfig context instead of current-context
  --namespace <ns>      count pods in one namespace only (default: all namespaces)
  --embedded            start an in-process API server and keep creating/deleting pods on it
  --duration <seconds>  stop after this many seconds and exit 0 (default: run until Ctrl-C)
  --log-level <level>   trace|debug|info|warn|error (default: info)
`;

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  let values: ReturnType<typeof parse>['values'];
  try {
    values = parse(argv).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) {
    process.stdout.write(usage);
    return 0;
  }
  let durationMs: number | undefined;
  if (values.duration !== undefined) {
    const s = Number(values.duration);
    if (!Number.isFinite(s) || s <= 0)
      throw new UsageError(`--duration must be a positive number of seconds, got ${values.duration}`);
    durationMs = s * 1000;
  }
  if (values.embedded && (values.kubeconfig || values.context)) {
    throw new UsageError(
      '--embedded runs its own API server; do not combine it with --kubeconfig or --context',
    );
  }
  const level = values['log-level'] ?? 'info';
  if (!isLogLevel(level)) {
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join('|')}, got ${level}`);
  }
  const logger = newLogger({ level });
  const stop = setupSignalHandler();
  // Not AbortSignal.any([stop, AbortSignal.timeout(ms)]): Node may collect that timeout signal, and then the
  // duration never ends. A plain timer held here cannot be collected.
  const run = new AbortController();
  stop.addEventListener('abort', () => run.abort(stop.reason), { once: true });
  const durationTimer =
    durationMs !== undefined
      ? setTimeout(() => run.abort(new Error('duration elapsed')), durationMs)
      : undefined;
  const signal = run.signal;

  let env: Environment | undefined;
  let stopChurn: (() => Promise<void>) | undefined;
  let churnClient: ReturnType<typeof newClient> | undefined;
  let config: RestConfig;
  try {
    if (values.embedded) {
      // Loaded only for --embedded, so running against a cluster does not pay for the server's code.
      const { Environment } = await import('@kubeloop/envtest');
      env = new Environment();
      config = await env.start();
      logger.info({ host: config.host, kubeconfig: env.kubeconfigPath }, 'embedded API server started');
      churnClient = newClient(config);
      stopChurn = await startChurn(churnClient, {
        namespaces: ['demo-a', 'demo-b', 'demo-c'],
        logger: logger.child({ component: 'churn' }),
      });
    } else {
      config = getConfig({
        ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
        ...(values.context ? { context: values.context } : {}),
        appName: 'pod-counter',
      });
      logger.info(
        {
          host: config.host,
          kubeconfig: values.kubeconfig ?? process.env.KUBECONFIG ?? '(default loading order)',
          ...(values.context ? { context: values.context } : {}),
        },
        'using API server',
      );
    }
    await runPodCounter(config, {
      signal,
      logger,
      ...(values.namespace ? { namespace: values.namespace } : {}),
    });
  } finally {
    clearTimeout(durationTimer);
    await stopChurn?.();
    await churnClient?.close();
    await env?.stop();
  }
  logger.info({}, 'pod-counter stopped');
  return 0;
}

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
function isLogLevel(v: string): v is (typeof LOG_LEVELS)[number] {
  return (LOG_LEVELS as readonly string[]).includes(v);
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      namespace: { type: 'string' },
      embedded: { type: 'boolean' },
      duration: { type: 'string' },
      'log-level': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // Nothing should be left running; if something is, do not hang the terminal.
    setTimeout(() => process.exit(code), 2000).unref();
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`pod-counter: ${err.message}\n${usage}`);
      process.exit(2);
    }
    process.stderr.write(`pod-counter: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
