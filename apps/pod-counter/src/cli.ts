#!/usr/bin/env node
/**
 * `pod-counter`: runs the PodCounter controller against a cluster (`--kubeconfig`, `--context`, or the
 * default loading order: `KUBECONFIG` → in-cluster → `~/.kube/config`), or against an embedded API server
 * it fills with churning pods (`--embedded`). `--duration <seconds>` stops it and exits 0; Ctrl-C or
 * SIGTERM stops it cleanly at any time (a second signal exits 1 at once).
 *
 * Exit codes: 0 stopped cleanly; 1 a runtime failure (unreadable kubeconfig, unreachable server, lost
 * lease), printed as one line on stderr; 2 a bad command line, printed as one line on stderr.
 */
import { createRequire } from 'node:module';
import { type Logger, setupSignalHandler } from '@kubeloop/builder';
import { resolveLeaseNamespace } from '@kubeloop/builder/leaderelection';
import { newClient } from '@kubeloop/client';
import { getConfig, type RestConfig } from '@kubeloop/config';
import { onAbort } from '@kubeloop/core';
import type { Environment } from '@kubeloop/envtest';
import { startChurn } from './churn.js';
import { type CliOptions, parseCli, UsageError } from './cli-options.js';
import { cliLogger } from './log.js';
import { runPodCounter } from './pod-counter.js';
import { checkReachable } from './preflight.js';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

let debug = false;

async function main(argv: string[]): Promise<number> {
  const parsed = parseCli(argv, version);
  if (parsed.kind === 'print') {
    process.stdout.write(parsed.text);
    return 0;
  }
  const o = parsed.options;
  debug = o.logLevel === 'debug' || o.logLevel === 'trace';
  const logger = cliLogger(o.logLevel, o.logFormat);
  const stop = setupSignalHandler();
  // A plain timer held here, not AbortSignal.timeout: Node may collect a timeout signal nobody references.
  const run = new AbortController();
  onAbort(stop, () => run.abort(stop.reason));
  const durationTimer =
    o.durationMs !== undefined
      ? setTimeout(() => run.abort(new Error('duration elapsed')), o.durationMs)
      : undefined;

  let env: Environment | undefined;
  let stopChurn: (() => Promise<void>) | undefined;
  let churnClient: ReturnType<typeof newClient> | undefined;
  try {
    let config: RestConfig;
    if (o.embedded) {
      // Loaded only for --embedded, so running against a cluster does not pay for the server's code.
      const { Environment } = await import('@kubeloop/envtest');
      // Always the in-process server: Environment alone would follow USE_EXISTING_CLUSTER or KUBEBUILDER_ASSETS
      // from the shell, and the demo's churn would then create and delete pods on that cluster.
      env = new Environment({ useExistingCluster: false, env: {} });
      config = await env.start();
      logger.info({ host: config.host, kubeconfig: env.kubeconfigPath }, 'embedded API server started');
      churnClient = newClient(config);
      stopChurn = await startChurn(churnClient, {
        namespaces: ['demo-a', 'demo-b', 'demo-c'],
        logger: logger.child({ component: 'churn' }),
      });
    } else {
      config = getConfig({
        ...(o.kubeconfig ? { kubeconfig: o.kubeconfig } : {}),
        ...(o.context ? { context: o.context } : {}),
        argv: [],
        appName: 'pod-counter',
        appVersion: `v${version}`,
      });
      logger.info(
        {
          host: config.host,
          kubeconfig: o.kubeconfig ?? process.env.KUBECONFIG ?? '(default loading order)',
          ...(o.context ? { context: o.context } : {}),
        },
        'using API server',
      );
      await checkReachable(config, run.signal);
    }
    await runPodCounter(config, runOptions(o, logger, run.signal));
  } finally {
    clearTimeout(durationTimer);
    await stopChurn?.();
    await churnClient?.close();
    await env?.stop();
  }
  logger.info({}, 'pod-counter stopped');
  return 0;
}

function runOptions(o: CliOptions, logger: Logger, signal: AbortSignal): Parameters<typeof runPodCounter>[1] {
  // The embedded demo serves metrics and probes on free loopback ports and prints them.
  const fallbackBind = (port: string) => (o.embedded ? '127.0.0.1:0' : `:${port}`);
  return {
    signal,
    logger,
    namespaces: o.namespaces,
    ...(o.labelSelector ? { labelSelector: o.labelSelector } : {}),
    ...(o.leaderElect
      ? {
          leaderElection: {
            id: o.leaderElectionId,
            ...(o.leaseDurationMs ? { leaseDurationMs: o.leaseDurationMs } : {}),
            ...(o.renewDeadlineMs ? { renewDeadlineMs: o.renewDeadlineMs } : {}),
            ...(o.retryPeriodMs ? { retryPeriodMs: o.retryPeriodMs } : {}),
            ...(o.leaderElectionNamespace ? { namespace: o.leaderElectionNamespace } : {}),
          },
        }
      : {}),
    ...(o.shards
      ? {
          sharding: {
            name: o.shardName,
            namespace: resolveLeaseNamespace(o.shardNamespace),
            ...(o.leaseDurationMs ? { leaseDurationMs: o.leaseDurationMs } : {}),
            ...(o.renewDeadlineMs ? { renewDeadlineMs: o.renewDeadlineMs } : {}),
            ...(o.retryPeriodMs ? { retryPeriodMs: o.retryPeriodMs } : {}),
          },
        }
      : {}),
    metricsBindAddress: o.metricsBindAddress ?? fallbackBind('8080'),
    healthProbeBindAddress: o.healthProbeBindAddress ?? fallbackBind('8081'),
    maxConcurrentReconciles: o.maxConcurrentReconciles,
    ...(o.report ? { report: o.report } : {}),
    onListening: ({ metrics, probes }) => {
      if (!metrics && !probes) return;
      logger.info(
        {
          ...(metrics ? { metrics: `http://${metrics}/metrics` } : {}),
          ...(probes ? { healthz: `http://${probes}/healthz`, readyz: `http://${probes}/readyz` } : {}),
        },
        'serving metrics and probes',
      );
    },
  };
}

/** One line for stderr: the error's message, and its causes' messages (never a stack unless debugging). */
function oneLine(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const parts = [err.message];
  let cause = err.cause;
  while (cause instanceof Error && parts.length < 4) {
    if (!parts.some((p) => p.includes(cause instanceof Error ? cause.message : '')))
      parts.push(cause.message);
    cause = cause.cause;
  }
  return parts.join(': ').replace(/\s*\n\s*/g, ' ');
}

main(process.argv.slice(2)).then(
  (code) => {
    // Exit now: everything has stopped, and a second Ctrl-C arriving in the meantime must not turn a clean
    // stop into a death by signal (exit 130).
    process.exit(code);
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`pod-counter: ${err.message} (see pod-counter --help)\n`);
      process.exit(2);
    }
    const hint =
      (err as NodeJS.ErrnoException | undefined)?.code === 'EADDRINUSE'
        ? ' (choose other ports with --metrics-bind-address / --health-probe-bind-address, or 0 to disable)'
        : '';
    process.stderr.write(`pod-counter: ${oneLine(err)}${hint}\n`);
    if (debug && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  },
);
