/**
 * The TypeScript sources and the test of a new project (`kubeloop init`): `src/main.ts`, `src/manager.ts`,
 * `src/dev.ts`, `src/controllers/index.ts` and `test/manager.test.ts`, each a function of the {@link Project}.
 */
import type { Project } from '../project.js';
import { MARK } from './markers.js';

/** `src/main.ts`: parses the flags, builds the manager on the kubeconfig and starts it. */
export function mainTs(p: Project): string {
  return `/**
 * The ${p.name} manager: loads the kubeconfig (\`--kubeconfig\`, \`KUBECONFIG\`, in-cluster, \`~/.kube/config\`), runs
 * this project's controllers (and webhooks) with leader election, Prometheus metrics and health probes, and stops
 * cleanly on SIGINT / SIGTERM. Flags: see \`parseFlags\` in manager.ts.
 */
import { getConfigOrDie, newLogger, newManager, setupSignalHandler } from '@kubeloop/builder';
import { managerOptions, parseFlags, setupManager } from './manager.js';

const flags = parseFlags(process.argv.slice(2));
const logger = newLogger({ level: flags.logLevel, name: '${p.name}' });
const mgr = newManager(getConfigOrDie({ argv: process.argv }), managerOptions(flags, logger));
setupManager(mgr);
logger.info({ leaderElection: flags.leaderElect }, 'starting manager');
await mgr.start(setupSignalHandler());
logger.info({}, 'manager stopped');
`;
}

/** `src/manager.ts`: the flags, the manager options and `setupManager`, shared by main, dev and tests. */
export function managerTs(p: Project): string {
  return `/** The ${p.name} manager's flags, its options, and what it runs (shared by main.ts, dev.ts and the tests). */
import { parseArgs } from 'node:util';
import {
  cacheSyncCheck,
  type Logger,
  type Manager,
  type ManagerOptions,
  type NewLoggerOptions,
  ping,
} from '@kubeloop/builder';
import { setupControllers } from './controllers/index.js';
// ${'kubeloop:scaffold:imports'}

/** The Lease replicas compete for when leader election is on. */
export const LEADER_ELECTION_ID = '${p.name}-leader-election';

/** The manager's command line. */
export interface Flags {
  /** Leader election on a Lease (\`--leader-elect\`): with several replicas, one reconciles. */
  readonly leaderElect: boolean;
  /** Where \`/metrics\` is served (\`--metrics-bind-address\`); \`0\` disables. */
  readonly metricsBindAddress: string;
  /** Where \`/healthz\` and \`/readyz\` are served (\`--health-probe-bind-address\`); \`0\` disables. */
  readonly healthProbeBindAddress: string;
  /** Where the webhook server listens (\`--webhook-bind-address\`), when the project has webhooks. */
  readonly webhookBindAddress: string;
  /** \`--log-level\`: fatal, error, warn, info, debug, trace or silent. */
  readonly logLevel: NonNullable<NewLoggerOptions['level']>;
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Parses the manager's flags (\`--kubeconfig\` and \`--context\` are read by getConfigOrDie).
 * @throws TypeError on an unknown flag or a bad value.
 */
export function parseFlags(argv: readonly string[]): Flags {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      'leader-elect': { type: 'boolean', default: false },
      'metrics-bind-address': { type: 'string', default: ':8080' },
      'health-probe-bind-address': { type: 'string', default: ':8081' },
      'webhook-bind-address': { type: 'string', default: ':9443' },
      'log-level': { type: 'string', default: 'info' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const level = values['log-level'];
  const logLevel = LEVELS.find((l) => l === level);
  if (!logLevel) throw new TypeError(\`--log-level \${level}: must be one of \${LEVELS.join(', ')}\`);
  return {
    leaderElect: values['leader-elect'],
    metricsBindAddress: values['metrics-bind-address'],
    healthProbeBindAddress: values['health-probe-bind-address'],
    webhookBindAddress: values['webhook-bind-address'],
    logLevel,
  };
}

/** The manager's options for \`flags\`: leader election on ${'`'}LEADER_ELECTION_ID${'`'} when asked, metrics and probes. */
export function managerOptions(flags: Flags, logger: Logger): ManagerOptions {
  return {
    logger,
    // a stopping leader hands the Lease over at once instead of letting it expire
    ...(flags.leaderElect ? { leaderElection: { id: LEADER_ELECTION_ID, releaseOnCancel: true } } : {}),
    metrics: { bindAddress: flags.metricsBindAddress },
    health: { bindAddress: flags.healthProbeBindAddress },
    webhook: { bindAddress: flags.webhookBindAddress },
  };
}

/** Registers the health checks, every controller and every webhook of ${p.name} on \`mgr\` (not started). */
export function setupManager(mgr: Manager): Manager {
  mgr.addHealthzCheck('ping', ping);
  mgr.addReadyzCheck('informers', cacheSyncCheck(mgr));
  setupControllers(mgr);
  // ${'kubeloop:scaffold:setup'}
  return mgr;
}
`;
}

/** `src/dev.ts`: runs the manager against an envtest server with the project's CRDs installed. */
export function devTs(p: Project): string {
  return `/**
 * \`npm run dev\`: ${p.name} against an embedded API server (@kubeloop/envtest) with this project's CRDs
 * (config/crd) installed — no cluster needed. Its webhooks, if it has any, are called as a cluster calls them: the
 * configurations and CRD conversions the generated manifests hold are installed, and their Service leads to this
 * process. Logs the kubeconfig to point kubectl at; Ctrl-C stops the manager and the server and exits 0. Takes the
 * manager's flags (metrics, probes and webhooks default to free loopback ports).
 */
import { fileURLToPath } from 'node:url';
import { newLogger, newManager, setupSignalHandler } from '@kubeloop/builder';
import { kind, newClient } from '@kubeloop/client';
import { Environment } from '@kubeloop/envtest';
import { getWebhookServer, webhookManifests, webhookRegistrations } from '@kubeloop/webhook';
import { managerOptions, parseFlags, setupManager } from './manager.js';

const flags = parseFlags([
  '--metrics-bind-address=127.0.0.1:0',
  '--health-probe-bind-address=127.0.0.1:0',
  '--webhook-bind-address=127.0.0.1:0',
  ...process.argv.slice(2),
]);
const logger = newLogger({ level: flags.logLevel, name: '${p.name}' });
// the embedded server calls the webhook Service at 127.0.0.1: the serving certificate names it too
process.env.WEBHOOK_CERT_HOSTS ||= '127.0.0.1';
let webhookPort = 0;
const env = new Environment({
  crdDirectoryPaths: [fileURLToPath(new URL('../config/crd', import.meta.url))],
  server: { webhooks: { resolveService: () => \`https://127.0.0.1:\${webhookPort}\` } },
});
const config = await env.start();
logger.info(
  { host: config.host, kubeconfig: env.kubeconfigPath },
  \`embedded API server started: KUBECONFIG=\${env.kubeconfigPath} kubectl get crds\`,
);
let code = 0;
const client = newClient(config);
try {
  const mgr = setupManager(newManager(config, managerOptions(flags, logger)));
  const webhooks = webhookRegistrations(mgr);
  // what config/webhook and config/crd/patches install on a cluster; the manager injects its CA bundle into them
  const service = { name: '${p.name}-webhook-service', namespace: process.env.POD_NAMESPACE ?? 'default' };
  for (const m of webhooks.length > 0 ? webhookManifests(webhooks, { name: '${p.name}-webhooks', service }) : [])
    if (m.kind === 'CustomResourceDefinition')
      await client.patch(kind(m.apiVersion, m.kind), { name: m.metadata.name }, { type: 'merge', data: m });
    else await client.create(kind(m.apiVersion, m.kind), m);
  const running = mgr.start(setupSignalHandler());
  if (webhooks.length > 0) {
    await getWebhookServer(mgr).ready();
    webhookPort = getWebhookServer(mgr).port() ?? 0;
    logger.info({ port: webhookPort }, 'webhooks served: the embedded API server calls them');
  }
  await running;
  logger.info({}, 'manager stopped');
} catch (err) {
  logger.error({ err }, 'manager failed');
  code = 1;
} finally {
  await client.close();
  await env.stop();
}
logger.info({ exitCode: code }, 'dev stopped');
// everything has stopped: exit now, so a second Ctrl-C in the meantime cannot turn a clean stop into exit 130
process.exit(code);
`;
}

/** `src/controllers/index.ts`: the RBAC declarations and `setupControllers`, with markers for `create api`. */
export function controllersIndex(): string {
  return `/** Every controller of this project; \`kubeloop create api\` adds its lines at the markers. */
import type { Manager } from '@kubeloop/builder';
import { controllerRbac } from '@kubeloop/crd';
// ${MARK.imports}

/**
 * What the manager itself needs: its leader-election Lease (read by \`kubeloop rbac generate\`). A controller that
 * records Events declares \`events: true\` in its own \`controllerRbac\`.
 */
export const managerRbac = controllerRbac({ name: 'manager', leaderElection: true });

/** Every controller's RBAC declaration: \`npm run generate:rbac\` writes config/rbac/role.yaml from them. */
export const rbac = [
  managerRbac,
  // ${MARK.rbac}
];

/** Registers every controller on \`mgr\` (not started). */
export function setupControllers(mgr: Manager): Manager {
  // ${MARK.controllers}
  return mgr;
}
`;
}

/** `test/manager.test.ts`: the flag parsing and manager-options test every project starts with. */
export function managerTest(): string {
  return `import { describe, expect, it } from 'vitest';
import { LEADER_ELECTION_ID, managerOptions, parseFlags } from '../src/manager.js';

describe('manager flags', () => {
  it('default to no leader election, metrics on :8080 and probes on :8081', () => {
    const flags = parseFlags([]);
    expect(flags).toEqual({
      leaderElect: false,
      metricsBindAddress: ':8080',
      healthProbeBindAddress: ':8081',
      webhookBindAddress: ':9443',
      logLevel: 'info',
    });
  });

  it('turn leader election on with --leader-elect, on the project Lease', () => {
    const flags = parseFlags(['--leader-elect', '--metrics-bind-address=0', '--kubeconfig', '/dev/null']);
    const options = managerOptions(flags, undefined as never);
    expect(options).toMatchObject({
      leaderElection: { id: LEADER_ELECTION_ID, releaseOnCancel: true },
      metrics: { bindAddress: '0' },
      health: { bindAddress: ':8081' },
    });
    expect(managerOptions(parseFlags([]), undefined as never).leaderElection).toBeUndefined();
  });

  it('refuse an unknown flag and a bad log level', () => {
    expect(() => parseFlags(['--leader-elektion'])).toThrow(/leader-elektion/);
    expect(() => parseFlags(['--log-level=loud'])).toThrow(/--log-level loud/);
  });
});
`;
}
