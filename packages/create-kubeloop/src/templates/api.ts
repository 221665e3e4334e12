/**
 * The files of `kubeloop create api`: a schema-defined kind (`@kubeloop/crd`), a controller that runs each object
 * as a Deployment it owns, the RBAC the controller declares, a sample object and an envtest test that installs the
 * generated CRD. The counterpart of kubebuilder's `create api` (types, controller, suite test).
 */
import { kebab, lowerCamel } from '../names.js';

/** What `create api` is asked for. */
export interface ApiSpec {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** `Namespaced` (default) or `Cluster`. */
  readonly scope: 'Namespaced' | 'Cluster';
  /** False when another version of the kind exists: that one stays the storage version. */
  readonly storage: boolean;
}

/** Where the kind's module lives, relative to the project. */
export function kindModule(a: Pick<ApiSpec, 'version' | 'kind'>): string {
  return `src/api/${a.version}/${kebab(a.kind)}.ts`;
}

/** The kind's module: its schema, descriptor and object type. */
export function kindTs(a: ApiSpec): string {
  const cluster = a.scope === 'Cluster';
  return `/**
 * ${a.group}/${a.version} ${a.kind}. The schema below is the one source of the TypeScript type (\`${a.kind}Object\`),
 * the kind descriptor the client and the builder take, the CRD (\`npm run generate:crd\`) and in-process validation.
 */
import type { ObjectOf } from '@kubeloop/client';
import { defineKind, StatusConditions } from '@kubeloop/crd';
import { Type } from 'typebox';

export const ${a.kind} = defineKind({
  group: '${a.group}',
  version: '${a.version}',
  kind: '${a.kind}',
  scope: '${a.scope}',${a.storage ? '' : '\n  // another version of the kind is the storage version: objects are stored in that one\n  storage: false,'}
  spec: Type.Object({
    image: Type.String({ minLength: 1, description: 'The container image to run.' }),
    replicas: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 100, default: 1, description: 'How many pods to run.' }),
    ),${
      cluster
        ? `
    namespace: Type.String({ minLength: 1, description: 'The namespace the Deployment runs in.' }),`
        : ''
    }
  }),
  status: Type.Object({
    readyReplicas: Type.Optional(Type.Integer({ description: 'Ready pods of the Deployment.' })),
    observedGeneration: Type.Optional(Type.Integer({ description: 'The generation the status reflects.' })),
    // metav1.Condition entries, one per type (list-type map), validated as controller-gen's schema does
    conditions: Type.Optional(StatusConditions()),
  }),
  printerColumns: [
    { name: 'Image', type: 'string', jsonPath: '.spec.image' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
  ],
});

/** The ${a.kind} object type. */
export type ${a.kind}Object = ObjectOf<typeof ${a.kind}>;
`;
}

/** The version's index module, created by the first kind of the version. */
export function versionIndexTs(a: Pick<ApiSpec, 'version'>): string {
  return `/** The kinds of version ${a.version}; \`kubeloop create api\` adds a line per kind. */
// kubeloop:scaffold:api
`;
}

/** The API index module (\`kubeloop crd generate\` reads its build), created by the first kind. */
export function apiIndexTs(): string {
  return `/**
 * Every version of this project's kinds, one namespace each (\`v1alpha1.WebApp\`): \`npm run generate:crd\` writes
 * config/crd/crds.yaml from the kinds this module exports. \`kubeloop create api\` adds a line per version.
 */
// kubeloop:scaffold:api
`;
}

/** The controller: reconciles each object into a Deployment it controls and reports readiness in status. */
export function controllerTs(a: ApiSpec): string {
  const v = lowerCamel(a.kind);
  const cluster = a.scope === 'Cluster';
  const depNamespace = cluster ? 'app.spec.namespace' : 'req.namespace';
  return `/**
 * The ${a.kind} controller: runs every ${a.kind} as a Deployment of the same name that the ${a.kind} controls (deleted
 * with it by the garbage collector), and copies the Deployment's ready replicas into the ${a.kind}'s status, with an
 * \`Available\` condition that says whether every replica is ready.
 */
import {
  createOrUpdate,
  Deployment,
  isNotFound,
  type Manager,
  newControllerManagedBy,
  type Reconciler,
  setControllerReference,
} from '@kubeloop/builder';
import { type Cached, type DeepReadonly, deepCopy } from '@kubeloop/client';
import { setStatusCondition } from '@kubeloop/client/conditions';
import { controllerRbac } from '@kubeloop/crd';
import { ${a.kind}, type ${a.kind}Object } from '../api/${a.version}/index.js';

/** What the controller needs from the API server: \`npm run generate:rbac\` turns it into config/rbac/role.yaml. */
export const ${v}Rbac = controllerRbac({
  name: '${kebab(a.kind)}',
  for: ${a.kind},
  owns: [Deployment],
  calls: [
    { kind: Deployment, verbs: ['create', 'update'] },
    { kind: ${a.kind}, subresource: 'status', verbs: ['update'] },
  ],
});

/** The labels of the pods of \`app\`'s Deployment. */
export function podLabels(app: DeepReadonly<${a.kind}Object>): Record<string, string> {
  return { 'app.kubernetes.io/name': '${kebab(a.kind)}', 'app.kubernetes.io/instance': app.metadata?.name ?? '' };
}

/** Reconciles one ${a.kind}: makes its Deployment match its spec, then its status match the Deployment. */
export function ${v}Reconciler(mgr: Manager): Reconciler {
  const client = mgr.getClient();
  return {
    async reconcile(ctx, req) {
      // Read from the manager's cache: frozen and shared, so typed read-only (copy with deepCopy to change it).
      let app: Cached<${a.kind}Object>;
      try {
        app = await client.get(${a.kind}, req, { signal: ctx.signal });
      } catch (err) {
        if (isNotFound(err)) return {}; // deleted: its Deployment goes with it (owner reference)
        throw err;
      }
      if (app.metadata?.deletionTimestamp) return {};
      const labels = podLabels(app);
      const { object: deployment } = await createOrUpdate(
        client,
        Deployment,
        { namespace: ${depNamespace}, name: req.name },
        (d) => {
          d.metadata = { ...d.metadata, labels: { ...d.metadata?.labels, ...labels } };
          d.spec = {
            ...d.spec,
            replicas: app.spec.replicas ?? 1,
            selector: d.spec?.selector ?? { matchLabels: labels },
            template: {
              ...d.spec?.template,
              metadata: { ...d.spec?.template?.metadata, labels },
              spec: { containers: [{ name: 'app', image: app.spec.image }] },
            },
          };
          setControllerReference(app, d);
        },
      );
      const wanted = app.spec.replicas ?? 1;
      const ready = deployment.status?.readyReplicas ?? 0;
      const generation = app.metadata?.generation;
      const next = deepCopy(app);
      next.status ??= {};
      const status = next.status;
      status.conditions ??= [];
      let changed = status.readyReplicas !== ready || status.observedGeneration !== generation;
      status.readyReplicas = ready;
      if (generation !== undefined) status.observedGeneration = generation;
      // the last transition time changes only when the condition's status does (apimachinery SetStatusCondition)
      const available = ready >= wanted;
      changed =
        setStatusCondition(status.conditions, {
          type: 'Available',
          status: available ? 'True' : 'False',
          reason: available ? 'ReplicasReady' : 'ReplicasNotReady',
          message: \`\${ready} of \${wanted} replicas ready\`,
          observedGeneration: generation,
        }) || changed;
      if (changed) await client.status().update(${a.kind}, next);
      return {};
    },
  };
}

/** Registers the ${a.kind} controller on \`mgr\`: it watches ${a.kind}s and the Deployments they own. */
export function setup${a.kind}Controller(mgr: Manager): void {
  newControllerManagedBy(mgr)
    .named(${v}Rbac.name)
    .for(${a.kind})
    .owns(Deployment)
    .complete(${v}Reconciler(mgr));
}
`;
}

/** The envtest test of the controller; it installs the generated CRD from config/crd. */
export function controllerTestTs(a: ApiSpec): string {
  const cluster = a.scope === 'Cluster';
  const meta = cluster ? `{ name }` : `{ namespace: ns, name }`;
  const depNs = 'ns';
  const spec = (image: string, replicas: number) =>
    cluster
      ? `{ image: '${image}', replicas: ${replicas}, namespace: ns }`
      : `{ image: '${image}', replicas: ${replicas} }`;
  return `// The ${a.kind} controller against an API server: envtest (in-process) installs the CRD \`npm run generate:crd\` wrote
// to config/crd, or, with USE_EXISTING_CLUSTER=true, the cluster of your kubeconfig.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Deployment, Namespace, newManager } from '@kubeloop/builder';
import { type ApiClient, isInvalid, newClient } from '@kubeloop/client';
import { Environment } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ${a.kind} } from '../src/api/${a.version}/index.js';
import { setupControllers } from '../src/controllers/index.js';

describe('${a.kind} controller', () => {
  let env: Environment;
  let client: ApiClient;
  const ns = \`test-\${randomBytes(4).toString('hex')}\`;
  beforeAll(async () => {
    env = new Environment({
      crdDirectoryPaths: [fileURLToPath(new URL('../config/crd', import.meta.url))],
      errorIfCrdPathMissing: true,
    });
    await env.start();
    client = newClient(env.config);
    await client.create(Namespace, { metadata: { name: ns } });
  });
  afterAll(async () => {
    await client?.delete(Namespace, { name: ns }).catch(() => undefined);
    await client?.close();
    await env?.stop();
  });

  it('runs a ${a.kind} as a Deployment it controls, and follows a change of its spec', async () => {
    const mgr = newManager(env.config, { metrics: { bindAddress: '0' } });
    setupControllers(mgr);
    const stop = new AbortController();
    const done = mgr.start(stop.signal);
    const name = \`app-\${randomBytes(3).toString('hex')}\`;
    try {
      await client.create(${a.kind}, {
        metadata: ${meta},
        spec: ${spec('nginx:1.27', 2)},
      });
      const key = { namespace: ${depNs}, name };
      await vi.waitFor(
        async () => {
          const d = await client.get(Deployment, key);
          expect(d.spec?.replicas).toBe(2);
          expect(d.spec?.template?.spec?.containers[0]?.image).toBe('nginx:1.27');
          expect(d.metadata?.ownerReferences?.[0]).toMatchObject({ kind: '${a.kind}', name, controller: true });
        },
        { timeout: 30_000, interval: 100 },
      );
      // the status condition the server accepted (its schema is metav1.Condition's); envtest runs no Deployment
      // controller, so no replica gets ready there
      await vi.waitFor(
        async () => {
          const app = await client.get(${a.kind}, ${meta});
          const available = app.status?.conditions?.find((c) => c.type === 'Available');
          expect(available?.observedGeneration).toBe(app.metadata?.generation);
          expect(available?.reason).toMatch(/^Replicas(Not)?Ready$/);
        },
        { timeout: 30_000, interval: 100 },
      );
      await client.patch(${a.kind}, ${meta}, { type: 'merge', data: { spec: { replicas: 3 } } });
      await vi.waitFor(async () => expect((await client.get(Deployment, key)).spec?.replicas).toBe(3), {
        timeout: 30_000,
        interval: 100,
      });
    } finally {
      stop.abort();
      await done;
    }
  });

  it('is refused by the API server when the spec breaks the schema', async () => {
    const err = await client
      .create(${a.kind}, {
        metadata: ${cluster ? `{ name: 'too-many' }` : `{ namespace: ns, name: 'too-many' }`},
        spec: ${spec('nginx:1.27', 101)},
      })
      .catch((e: unknown) => e);
    expect(isInvalid(err)).toBe(true);
  });
});
`;
}

/** A sample object, for \`kubectl apply -f\`. */
export function sampleYaml(a: ApiSpec): string {
  return `apiVersion: ${a.group}/${a.version}
kind: ${a.kind}
metadata:
  name: ${kebab(a.kind)}-sample
spec:
  image: nginx:1.27
  replicas: 1${a.scope === 'Cluster' ? '\n  namespace: default' : ''}
`;
}

/** config/crd's kustomization: the one generated file of every CRD. */
export const crdKustomization = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - crds.yaml # generated: npm run generate:crd
patches:
  # kubeloop:scaffold:patches
`;

/** The package.json script that writes the CRDs. */
export const generateCrdScript = 'kubeloop crd generate dist/api/index.js --stdout > config/crd/crds.yaml';
