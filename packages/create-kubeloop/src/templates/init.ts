/**
 * The files of a new project (`kubeloop init`): kubebuilder's `init` layout, in TypeScript. Every template is a
 * function of the {@link Project}, so the repository's tests render them and compile the result.
 */
import { type Project, THIRD_PARTY } from '../project.js';
import {
  ciWorkflow,
  dockerfile,
  kustomizeDefault,
  managerKustomization,
  managerYaml,
  metricsService,
  rbacKustomization,
  serviceAccount,
} from './init-deploy.js';
import { controllersIndex, devTs, mainTs, managerTest, managerTs } from './init-src.js';

export { MARK } from './markers.js';

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
  "linter": {
    "enabled": true,
    "rules": { "preset": "recommended", "style": { "noNonNullAssertion": "off" } }
  }
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

function readme(p: Project): string {
  return `# ${p.name}

A Kubernetes operator built with [kubeloop](https://github.com/kubeloop/kubeloop) (controller-runtime for
TypeScript), scaffolded by \`create-kubeloop\`.

## Commands

| command                  | what it does                                                                                                                                                                                                  |
| ------------------------ | ------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------- |
| \`npm run dev\`            | runs the operator against an embedded API server (\`@kubeloop/envtest\`) with this project's CRDs installed and its webhooks called as a cluster calls them; prints a kubeconfig for \`kubectl\`; Ctrl-C stops it |
| \`npm test\`               | \`npm run generate\`, then unit tests and envtest tests (vitest)                                                                                                                                                |
| \`npm run generate\`       | compiles, then writes the CRDs (\`config/crd\`), RBAC (\`config/rbac/role.yaml\`) and webhook configurations (\`config/webhook\`) from the code                                                                     |
| \`npm run build\`          | compiles \`src/\` to \`dist/\`                                                                                                                                                                                    |
| \`npm start\`              | runs the operator against your kubeconfig's cluster (\`--kubeconfig\`, \`KUBECONFIG\`, in-cluster, \`~/.kube/config\`)                                                                                              |
| \`npm run deploy:dry-run\` | \`kubectl apply --dry-run=server -k config/default\`: the server validates everything, nothing is created                                                                                                       |
| \`npm run deploy\`         | applies \`config/default\` to the cluster                                                                                                                                                                       |

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

## Run from your machine against a cluster

\`npm start\` runs the manager here against your kubeconfig's cluster, once its CRDs are installed:

\`\`\`sh
npm run generate && kubectl apply --server-side -f config/crd/crds.yaml
npm start
\`\`\`

With webhooks (\`kubeloop create webhook\`), the API server must call this machine. Generate the webhook
configurations (and the CRD conversion) with a URL that reaches you instead of the Service, under a field manager
of their own (the same manager as the CRD apply would drop the CRD's other fields), and have the serving
certificate name that address (\`WEBHOOK_CERT_HOSTS\`, comma-separated); the manager keeps the CA bundle of its
self-signed certificates (a Secret in \`POD_NAMESPACE\`, default \`default\`) in them itself:

\`\`\`sh
npx kubeloop webhook generate dist/webhooks/index.js --stdout --name ${p.name}-webhooks --url https://127.0.0.1:9443 \\
  | kubectl apply --server-side --field-manager=${p.name}-local -f -
WEBHOOK_CERT_HOSTS=127.0.0.1 npm start
\`\`\`

\`127.0.0.1\` is right when the API server runs on this machine; with kind, use the address its node reaches the
host at (the gateway of kind's docker network); a cluster that cannot reach you needs the deployment below.
Delete these configurations before deploying (\`kubectl delete mutatingwebhookconfiguration,validatingwebhookconfiguration
${p.name}-webhooks\`): \`npm run deploy\` applies the ones that name the Service.

## Deploy

\`\`\`sh
docker build -t registry.example.com/${p.name}:v0.1.0 . && docker push registry.example.com/${p.name}:v0.1.0
(cd config/default && kustomize edit set image controller=registry.example.com/${p.name}:v0.1.0)
kubectl create namespace ${p.namespace}   # a server-side dry run creates nothing, so its namespace must exist
npm run deploy:dry-run && npm run deploy
\`\`\`
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
