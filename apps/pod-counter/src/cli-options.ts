import { existsSync } from 'node:fs';
import { parseLabelSelector } from '@kubeloop/client/apiutil';
import { SERVICE_ACCOUNT_DIR } from '@kubeloop/config';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { parseReportTarget, type ReportTarget } from './report.js';

/** Whether this process runs in a pod (its service account namespace file is there). */
function inCluster(): boolean {
  return existsSync(`${SERVICE_ACCOUNT_DIR}/namespace`);
}

/** A bad command line: the CLI prints its message on one line and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Log levels accepted by `--log-level`. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The parsed command line of `pod-counter`. */
export interface CliOptions {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly namespaces: readonly string[];
  readonly labelSelector?: string;
  readonly leaderElect: boolean;
  readonly leaderElectionNamespace?: string;
  readonly leaderElectionId: string;
  /** Count as one member of a sharding group (`--shards`): each replica counts the namespaces it owns. */
  readonly shards: boolean;
  /** Name of the sharding group. */
  readonly shardName: string;
  /** Namespace of the member Leases (`--shard-namespace`); absent in a pod: the pod namespace. */
  readonly shardNamespace?: string;
  /** Lease timings in ms, when given (`--leader-elect-lease-duration` etc.). */
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  /** `undefined`: the default (`:8080`, or a free loopback port with `--embedded`). */
  readonly metricsBindAddress?: string;
  /** `undefined`: the default (`:8081`, or a free loopback port with `--embedded`). */
  readonly healthProbeBindAddress?: string;
  readonly maxConcurrentReconciles: number;
  readonly logLevel: LogLevel;
  /** `undefined`: text on a terminal, JSON otherwise. */
  readonly logFormat?: 'text' | 'json';
  readonly report?: ReportTarget;
  readonly embedded: boolean;
  readonly durationMs?: number;
}

/** What {@link parseCli} found: options to run with, or text to print (help, version) and exit 0. */
export type ParsedCli =
  | { readonly kind: 'run'; readonly options: CliOptions }
  | { readonly kind: 'print'; readonly text: string };

function positiveNumber(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n <= 0)
      throw new InvalidArgumentError(`${flag} must be a positive number, got "${value}"`);
    return n;
  };
}

function positiveInteger(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1)
      throw new InvalidArgumentError(`${flag} must be a whole number ≥ 1, got "${value}"`);
    return n;
  };
}

function labelSelector(value: string): string {
  try {
    parseLabelSelector(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
  return value;
}

function reportTarget(value: string): ReportTarget {
  try {
    return parseReportTarget(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

function bindAddress(flag: string) {
  return (value: string): string => {
    if (value === '0') return value;
    const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]*):(\d{1,5})$/.exec(value);
    if (!m || Number(m[2]) > 65_535)
      throw new InvalidArgumentError(`${flag} must be [host]:port or 0, got "${value}"`);
    return value;
  };
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** The command definition (also the source of `--help`). */
function command(version: string): Command {
  return new Command('pod-counter')
    .description(
      'Counts pods with the kubeloop stack (the controller-runtime walkthrough PodCounter): logs the count, exports\n' +
        'pod_counter_pods{namespace,phase} on /metrics, serves /healthz and /readyz, optionally writes a ConfigMap report.',
    )
    .version(version, '--version', 'print the version and exit')
    .helpOption('-h, --help', 'print this help and exit')
    .option('--kubeconfig <path>', 'kubeconfig file (default: KUBECONFIG, in-cluster, ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context instead of current-context')
    .addOption(
      new Option('--namespace <ns>', 'count pods in this namespace only; repeatable')
        .argParser(collect)
        .default([], 'all namespaces'),
    )
    .option('--label-selector <selector>', 'count only pods matching this label selector', labelSelector)
    .option('--leader-elect', 'run as one of several replicas; only the Lease holder reconciles', false)
    .option('--leader-election-namespace <ns>', 'namespace of the Lease (default: the pod namespace)')
    .option('--leader-election-id <name>', 'name of the Lease', 'pod-counter')
    .option(
      '--shards',
      'run as one of several active replicas: namespaces are spread over the live replicas, each counts and exports its own',
      false,
    )
    .option(
      '--shard-name <name>',
      'name of the sharding group (member Leases <name>-shard-<id>)',
      'pod-counter',
    )
    .option('--shard-namespace <ns>', 'namespace of the member Leases (default: the pod namespace)')
    .option(
      '--leader-elect-lease-duration <seconds>',
      'how long a Lease stays valid without renewal (default 15)',
      positiveNumber('--leader-elect-lease-duration'),
    )
    .option(
      '--leader-elect-renew-deadline <seconds>',
      'how long the leader keeps trying to renew before it stops leading (default 10)',
      positiveNumber('--leader-elect-renew-deadline'),
    )
    .option(
      '--leader-elect-retry-period <seconds>',
      'time between two attempts to acquire or renew (default 2)',
      positiveNumber('--leader-elect-retry-period'),
    )
    .option(
      '--metrics-bind-address <addr>',
      '[host]:port of /metrics, 0 disables (default ":8080"; a free loopback port with --embedded)',
      bindAddress('--metrics-bind-address'),
    )
    .option(
      '--health-probe-bind-address <addr>',
      '[host]:port of /healthz and /readyz, 0 disables (default ":8081"; a free loopback port with --embedded)',
      bindAddress('--health-probe-bind-address'),
    )
    .option(
      '--max-concurrent-reconciles <n>',
      'reconciles run at once',
      positiveInteger('--max-concurrent-reconciles'),
      1,
    )
    .addOption(new Option('--log-level <level>', 'log level').choices(LOG_LEVELS).default('info'))
    .addOption(
      new Option(
        '--log-format <format>',
        'text (colourised) or json (default: text on a terminal, else json)',
      ).choices(['text', 'json']),
    )
    .option(
      '--report-configmap <ns/name>',
      'write the counts to this ConfigMap (server-side apply)',
      reportTarget,
    )
    .option('--embedded', 'start an in-process API server and keep creating/deleting pods on it', false)
    .option('--duration <seconds>', 'stop after this many seconds and exit 0', positiveNumber('--duration'))
    .exitOverride()
    .configureOutput({ writeOut: () => {}, writeErr: () => {} })
    .allowExcessArguments(false);
}

/**
 * Parses `argv` (without `node` and the script).
 * @throws UsageError with a one-line message for an unknown flag, a missing or bad value, or flags that do
 *   not go together.
 */
export function parseCli(argv: readonly string[], version: string): ParsedCli {
  const cmd = command(version);
  let helpText = '';
  cmd.configureOutput({
    writeOut: (s) => {
      helpText += s;
    },
    writeErr: () => {},
  });
  try {
    cmd.parse([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') {
        return { kind: 'print', text: helpText || `${version}\n` };
      }
      throw new UsageError(err.message.replace(/^error: /, '').trim());
    }
    throw err;
  }
  const o = cmd.opts<{
    kubeconfig?: string;
    context?: string;
    namespace: string[];
    labelSelector?: string;
    leaderElect: boolean;
    leaderElectionNamespace?: string;
    leaderElectionId: string;
    shards: boolean;
    shardName: string;
    shardNamespace?: string;
    leaderElectLeaseDuration?: number;
    leaderElectRenewDeadline?: number;
    leaderElectRetryPeriod?: number;
    metricsBindAddress?: string;
    healthProbeBindAddress?: string;
    maxConcurrentReconciles: number;
    logLevel: LogLevel;
    logFormat?: 'text' | 'json';
    reportConfigmap?: ReportTarget;
    embedded: boolean;
    duration?: number;
  }>();
  if (o.leaderElect && !o.leaderElectionNamespace && !inCluster()) {
    throw new UsageError(
      '--leader-elect outside a cluster needs --leader-election-namespace <ns> (in a pod it defaults to the pod namespace)',
    );
  }
  if (o.shards && o.leaderElect) {
    throw new UsageError('--shards and --leader-elect do not go together: every shard member reconciles');
  }
  if (o.shards && o.reportConfigmap) {
    throw new UsageError(
      '--shards and --report-configmap do not go together: each replica counts only its namespaces',
    );
  }
  if (o.shards && !o.shardNamespace && !inCluster()) {
    throw new UsageError(
      '--shards outside a cluster needs --shard-namespace <ns> (in a pod it defaults to the pod namespace)',
    );
  }
  if (o.embedded && (o.kubeconfig || o.context)) {
    throw new UsageError(
      '--embedded runs its own API server; do not combine it with --kubeconfig or --context',
    );
  }
  return {
    kind: 'run',
    options: {
      ...(o.kubeconfig ? { kubeconfig: o.kubeconfig } : {}),
      ...(o.context ? { context: o.context } : {}),
      namespaces: [...new Set(o.namespace)],
      ...(o.labelSelector ? { labelSelector: o.labelSelector } : {}),
      leaderElect: o.leaderElect,
      ...(o.leaderElectionNamespace ? { leaderElectionNamespace: o.leaderElectionNamespace } : {}),
      leaderElectionId: o.leaderElectionId,
      shards: o.shards,
      shardName: o.shardName,
      ...(o.shardNamespace ? { shardNamespace: o.shardNamespace } : {}),
      ...(o.leaderElectLeaseDuration ? { leaseDurationMs: o.leaderElectLeaseDuration * 1000 } : {}),
      ...(o.leaderElectRenewDeadline ? { renewDeadlineMs: o.leaderElectRenewDeadline * 1000 } : {}),
      ...(o.leaderElectRetryPeriod ? { retryPeriodMs: o.leaderElectRetryPeriod * 1000 } : {}),
      ...(o.metricsBindAddress !== undefined ? { metricsBindAddress: o.metricsBindAddress } : {}),
      ...(o.healthProbeBindAddress !== undefined ? { healthProbeBindAddress: o.healthProbeBindAddress } : {}),
      maxConcurrentReconciles: o.maxConcurrentReconciles,
      logLevel: o.logLevel,
      ...(o.logFormat ? { logFormat: o.logFormat } : {}),
      ...(o.reportConfigmap ? { report: o.reportConfigmap } : {}),
      embedded: o.embedded,
      ...(o.duration !== undefined ? { durationMs: o.duration * 1000 } : {}),
    },
  };
}
