/**
 * The files of a new project (`kubeloop init`): kubebuilder's `init` layout, in TypeScript. Every template is a
 * function of the {@link Project}, so the repository's tests render them and compile the result.
 */
import { type Project, THIRD_PARTY } from '../project.js';

/** Marker comments where later commands insert lines (kubebuilder's `+kubebuilder:scaffold:*`). */
export const MARK = {
  imports: 'kubeloop:scaffold:imports',
  setup: 'kubeloop:scaffold:setup',
  controllers: 'kubeloop:scaffold:controllers',
  rbac: 'kubeloop:scaffold:rbac',
  api: 'kubeloop:scaffold:api',
  resources: 'kubeloop:scaffold:resources',
  webhooks: 'kubeloop:scaffold:webhooks',
  serve: 'kubeloop:scaffold:serve',
  patches: 'kubeloop:scaffold:patches',
} as const;

/** The scripts every project has; `create api` and `create webhook` add `generate:crd` / `generate:webhooks`. */
export function scripts(p: Project): Record<string, string> {
  return {
    build: 'tsc -p tsconfig.build.json',
    generate:
      'npm run build && npm run generate:rbac && npm run --if-present generate:crd && npm run --if-present generate:webhooks',
    'generate:rbac': `kubeloop rbac generate dist/controllers/index.js --out config/rbac/role.yaml --name ${p.name}-manager-role --namespace ${p.namespace} --service-account ${p.namespace}/${p.manager}`,
    test: 'npm run generate && vitest run',
    // predev, not `generate && node`: so Ctrl-C reaches the operator itself (a shell between npm and node would die of it)
    predev: 'npm run generate',
    dev: 'node dist/dev.js',
    start: 'node dist/main.js',
    typecheck: 'tsc --noEmit',
    lint: 'biome lint .',
    format: 'biome format --write .',
    'deploy:dry-run': 'npm run generate && kubectl apply --dry-run=server -k config/default',
    deploy: 'npm run generate && kubectl apply --server-side -k config/default',
  };
}

function packageJson(p: Project): string {
  const k = p.kubeloopRange;
  return `${JSON.stringify(
    {
      name: p.name,
      version: '0.1.0',
      private: true,
      description: `${p.name}: a Kubernetes operator built with kubeloop`,
      type: 'module',
      engines: { node: '>=20.18.1' },
      scripts: scripts(p),
      dependencies: {
        '@kubeloop/builder': k,
        '@kubeloop/client': k,
        '@kubeloop/crd': k,
        '@kubeloop/webhook': k,
        typebox: THIRD_PARTY.typebox,
      },
      devDependencies: {
        '@biomejs/biome': THIRD_PARTY['@biomejs/biome'],
        '@kubeloop/envtest': k,
        '@types/node': THIRD_PARTY['@types/node'],
        'create-kubeloop': k,
        typescript: THIRD_PARTY.typescript,
        vitest: THIRD_PARTY.vitest,
      },
    },
    null,
    2,
  )}\n`;
}

const tsconfig = `{
  "compilerOptions": {
    "target": "ES2022",
    "lib": ["ES2023"],
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "noUncheckedIndexedAccess": true,
    "noImplicitOverride": true,
    "noUnusedLocals": true,
    "noUnusedParameters": true,
    "verbatimModuleSyntax": true,
    "isolatedModules": true,
    "skipLibCheck": true,
    "types": ["node"],
    "noEmit": true
  },
  "include": ["src", "test", "vitest.config.ts"]
}
`;

const tsconfigBuild = `{
  "extends": "./tsconfig.json",
  "compilerOptions": {
    "noEmit": false,
    "rootDir": "src",
    "outDir": "dist",
    "sourceMap": true,
    "incremental": true,
    "tsBuildInfoFile": "dist/.tsbuildinfo"
  },
  "include": ["src"]
}
`;

const vitestConfig = `import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // envtest tests start an API server and a manager: generous budgets for loaded CI machines
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
`;

const biome = `{
  "files": { "includes": ["**", "!**/dist", "!**/node_modules", "!**/config"] },
  "formatter": { "enabled": true, "indentStyle": "space", "indentWidth": 2, "lineWidth": 110 },
  "javascript": { "formatter": { "quoteStyle": "single", "trailingCommas": "all", "semicolons": "always" } },
  "linter": { "enabled": true, "rules": { "preset": "recommended", "style": { "noNonNullAssertion": "off" } } }
}
`;

const gitignore = `node_modules/
dist/
*.tsbuildinfo
coverage/
.env
`;

const dockerignore = `node_modules
dist
coverage
.git
.github
config
test
`;

function dockerfile(p: Project): string {
  return `# ${p.name}: docker build -t ${p.name}:dev .
# Stage 1 compiles TypeScript with every dependency; stage 2 installs production dependencies only
# (npm ci --omit=dev), keeps the compiled files and runs as a non-root user.
FROM node:22-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:22-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist ./dist
# dev.js runs the operator on an embedded test API server: a development tool, not part of the image
RUN rm -f dist/dev.js dist/dev.js.map
USER 65532:65532
EXPOSE 8080 8081 9443
ENTRYPOINT ["node", "dist/main.js"]
`;
}

function ciWorkflow(p: Project): string {
  return `# ${p.name} CI: lint, unit + envtest tests (on an embedded API server, no cluster), generated files current,
# and the image builds.
name: ci
on:
  push:
  pull_request:
jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        node: [20, 22]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with:
          node-version: \${{ matrix.node }}
          cache: npm
      - run: npm ci
      - run: npm run lint
      - run: npm test
      - name: generated CRDs, RBAC and webhook configurations are committed
        run: git diff --exit-code config/
  image:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: docker build -t ${p.name}:ci .
`;
}

function readme(p: Project): string {
  return `# ${p.name}

A Kubernetes operator built with [kubeloop](https://github.com/kubeloop/kubeloop) (controller-runtime for
TypeScript), scaffolded by \`create-kubeloop\`.

## Commands

| command | what it does |
|---|---|
| \`npm run dev\` | runs the operator against an embedded API server (\`@kubeloop/envtest\`) with this project's CRDs installed; prints a kubeconfig for \`kubectl\`; Ctrl-C stops it |
| \`npm test\` | \`npm run generate\`, then unit tests and envtest tests (vitest) |
| \`npm run generate\` | compiles, then writes the CRDs (\`config/crd\`), RBAC (\`config/rbac/role.yaml\`) and webhook configurations (\`config/webhook\`) from the code |
| \`npm run build\` | compiles \`src/\` to \`dist/\` |
| \`npm start\` | runs the operator against your kubeconfig's cluster (\`--kubeconfig\`, \`KUBECONFIG\`, in-cluster, \`~/.kube/config\`) |
| \`npm run deploy:dry-run\` | \`kubectl apply --dry-run=server -k config/default\`: the server validates everything, nothing is created |
| \`npm run deploy\` | applies \`config/default\` to the cluster |

## Add APIs and webhooks

\`\`\`sh
npx kubeloop create api --group apps.example.com --version v1alpha1 --kind WebApp
npx kubeloop create webhook --version v1alpha1 --kind WebApp --defaulting --validation
\`\`\`

\`create api\` writes the kind (\`src/api/<version>/\`, a TypeBox schema: the type, the descriptor and the CRD come
from it), a controller (\`src/controllers/\`) with its RBAC declaration, and an envtest test. Every command is
idempotent and never overwrites a file you edited (\`--force\` does).

## Layout

- \`src/main.ts\`: the manager (leader election, metrics on \`:8080\`, probes on \`:8081\`, signal handling);
  \`src/manager.ts\`: its flags and what it runs; \`src/dev.ts\`: the same on an embedded API server.
- \`src/api/\`: kinds; \`src/controllers/\`: reconcilers and their RBAC; \`src/webhooks/\`: admission and conversion.
- \`config/\`: kustomize. \`config/default\` = namespace \`${p.namespace}\` + CRDs + RBAC + the manager Deployment
  (2 replicas, one leads) + the metrics Service (+ webhooks). Generated files say so in their first line.

## Deploy

\`\`\`sh
docker build -t registry.example.com/${p.name}:v0.1.0 . && docker push registry.example.com/${p.name}:v0.1.0
(cd config/default && kustomize edit set image controller=registry.example.com/${p.name}:v0.1.0)
kubectl create namespace ${p.namespace}   # a server-side dry run creates nothing, so its namespace must exist
npm run deploy:dry-run && npm run deploy
\`\`\`
`;
}

function mainTs(p: Project): string {
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

function managerTs(p: Project): string {
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

function devTs(p: Project): string {
  return `/**
 * \`npm run dev\`: ${p.name} against an embedded API server (@kubeloop/envtest) with this project's CRDs
 * (config/crd) installed — no cluster needed. Logs the kubeconfig to point kubectl at; Ctrl-C stops the manager
 * and the server and exits 0. Takes the manager's flags (metrics and probes default to free loopback ports).
 */
import { fileURLToPath } from 'node:url';
import { newLogger, newManager, setupSignalHandler } from '@kubeloop/builder';
import { Environment } from '@kubeloop/envtest';
import { managerOptions, parseFlags, setupManager } from './manager.js';

const flags = parseFlags([
  '--metrics-bind-address=127.0.0.1:0',
  '--health-probe-bind-address=127.0.0.1:0',
  '--webhook-bind-address=127.0.0.1:0',
  ...process.argv.slice(2),
]);
const logger = newLogger({ level: flags.logLevel, name: '${p.name}' });
const env = new Environment({ crdDirectoryPaths: [fileURLToPath(new URL('../config/crd', import.meta.url))] });
const config = await env.start();
logger.info(
  { host: config.host, kubeconfig: env.kubeconfigPath },
  \`embedded API server started: KUBECONFIG=\${env.kubeconfigPath} kubectl get crds\`,
);
let code = 0;
try {
  const mgr = setupManager(newManager(config, managerOptions(flags, logger)));
  await mgr.start(setupSignalHandler());
  logger.info({}, 'manager stopped');
} catch (err) {
  logger.error({ err }, 'manager failed');
  code = 1;
} finally {
  await env.stop();
}
logger.info({ exitCode: code }, 'dev stopped');
// everything has stopped: exit now, so a second Ctrl-C in the meantime cannot turn a clean stop into exit 130
process.exit(code);
`;
}

function controllersIndex(): string {
  return `/** Every controller of this project; \`kubeloop create api\` adds its lines at the markers. */
import type { Manager } from '@kubeloop/builder';
import { controllerRbac } from '@kubeloop/crd';
// ${MARK.imports}

/** What the manager itself needs: its leader-election Lease (read by \`kubeloop rbac generate\`). */
export const managerRbac = controllerRbac({ name: 'manager', leaderElection: true, events: true });

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

function managerTest(): string {
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

function kustomizeDefault(p: Project): string {
  return `# Everything ${p.name} needs on a cluster: \`npm run deploy:dry-run\`, then \`npm run deploy\`.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: ${p.namespace}
resources:
  - ../manager
  - ../rbac
  # ${MARK.resources}
images:
  - name: controller
    newName: ${p.name} # your registry: kustomize edit set image controller=registry.example.com/${p.name}:v0.1.0
    newTag: dev
`;
}

function managerYaml(p: Project): string {
  return `apiVersion: v1
kind: Namespace
metadata:
  name: ${p.namespace}
  labels:
    app.kubernetes.io/name: ${p.name}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${p.manager}
  namespace: ${p.namespace}
  labels:
    app.kubernetes.io/name: ${p.name}
    app.kubernetes.io/component: manager
spec:
  replicas: 2 # one leads (reconciles), the other stands by for the Lease
  selector:
    matchLabels:
      app.kubernetes.io/name: ${p.name}
      app.kubernetes.io/component: manager
  template:
    metadata:
      labels:
        app.kubernetes.io/name: ${p.name}
        app.kubernetes.io/component: manager
    spec:
      serviceAccountName: ${p.manager}
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        runAsGroup: 65532
        seccompProfile:
          type: RuntimeDefault
      terminationGracePeriodSeconds: 30
      containers:
        - name: manager
          image: controller
          args:
            - --leader-elect
            - --metrics-bind-address=:8080
            - --health-probe-bind-address=:8081
          env:
            - name: POD_NAMESPACE # where the webhook certificates' Secret is kept
              valueFrom:
                fieldRef:
                  fieldPath: metadata.namespace
          ports:
            - name: metrics
              containerPort: 8080
            - name: probes
              containerPort: 8081
            - name: webhooks
              containerPort: 9443
          livenessProbe:
            httpGet:
              path: /healthz
              port: probes
            initialDelaySeconds: 10
            periodSeconds: 10
          readinessProbe:
            httpGet:
              path: /readyz
              port: probes
            periodSeconds: 5
          resources:
            requests:
              cpu: 20m
              memory: 96Mi
            limits:
              cpu: 500m
              memory: 256Mi
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              drop: ["ALL"]
`;
}

function metricsService(p: Project): string {
  return `# /metrics of every replica, for Prometheus (annotation-based discovery, or a ServiceMonitor on this Service).
apiVersion: v1
kind: Service
metadata:
  name: ${p.name}-metrics
  namespace: ${p.namespace}
  labels:
    app.kubernetes.io/name: ${p.name}
  annotations:
    prometheus.io/scrape: "true"
    prometheus.io/port: "8080"
spec:
  selector:
    app.kubernetes.io/name: ${p.name}
    app.kubernetes.io/component: manager
  ports:
    - name: metrics
      port: 8080
      targetPort: metrics
`;
}

const managerKustomization = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - manager.yaml
  - metrics-service.yaml
`;

const rbacKustomization = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - service-account.yaml
  - role.yaml # generated: npm run generate:rbac
`;

function serviceAccount(p: Project): string {
  return `apiVersion: v1
kind: ServiceAccount
metadata:
  name: ${p.manager}
  namespace: ${p.namespace}
`;
}

/** Every file of a new project, by path relative to the project folder. */
export function initFiles(p: Project): Record<string, string> {
  return {
    'package.json': packageJson(p),
    'tsconfig.json': tsconfig,
    'tsconfig.build.json': tsconfigBuild,
    'vitest.config.ts': vitestConfig,
    'biome.json': biome,
    '.gitignore': gitignore,
    '.dockerignore': dockerignore,
    Dockerfile: dockerfile(p),
    'README.md': readme(p),
    '.github/workflows/ci.yaml': ciWorkflow(p),
    'src/main.ts': mainTs(p),
    'src/manager.ts': managerTs(p),
    'src/dev.ts': devTs(p),
    'src/controllers/index.ts': controllersIndex(),
    'test/manager.test.ts': managerTest(),
    'config/default/kustomization.yaml': kustomizeDefault(p),
    'config/manager/kustomization.yaml': managerKustomization,
    'config/manager/manager.yaml': managerYaml(p),
    'config/manager/metrics-service.yaml': metricsService(p),
    'config/rbac/kustomization.yaml': rbacKustomization,
    'config/rbac/service-account.yaml': serviceAccount(p),
  };
}
