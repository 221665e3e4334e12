/**
 * The build and deployment files of a new project (`kubeloop init`): the Dockerfile, the CI workflow and the
 * kustomize tree under `config/` (manager Deployment, metrics Service, ServiceAccount), each a function of the
 * {@link Project} or a constant.
 */
import type { Project } from '../project.js';
import { MARK } from './markers.js';

/** `Dockerfile`: a two-stage build (compile, then production dependencies only). */
export function dockerfile(p: Project): string {
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

/** `.github/workflows/ci.yaml`: lint, type-check, test, and build the image. */
export function ciWorkflow(p: Project): string {
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

/** `config/default/kustomization.yaml`: the namespace, name prefix and every resource the project deploys. */
export function kustomizeDefault(p: Project): string {
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

/** `config/manager/manager.yaml`: the manager Deployment (probes, metrics port, restricted security context). */
export function managerYaml(p: Project): string {
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

/** `config/manager/metrics-service.yaml`: the Service in front of the manager's metrics port. */
export function metricsService(p: Project): string {
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

/** `config/manager/kustomization.yaml`. */
export const managerKustomization = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - manager.yaml
  - metrics-service.yaml
`;

/** `config/rbac/kustomization.yaml`. */
export const rbacKustomization = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - service-account.yaml
  - role.yaml # generated: npm run generate:rbac
`;

/** `config/rbac/service-account.yaml`: the manager's ServiceAccount. */
export function serviceAccount(p: Project): string {
  return `apiVersion: v1
kind: ServiceAccount
metadata:
  name: ${p.manager}
  namespace: ${p.namespace}
`;
}
