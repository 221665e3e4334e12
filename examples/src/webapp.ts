/**
 * A schema-defined kind and its controller (`@kubeloop/crd` + `@kubeloop/builder`): `WebApp` is defined once with
 * TypeBox — the TypeScript type, the kind descriptor the client and the builder take, the CRD
 * (`kubeloop crd generate`) and the RBAC the controller needs (`kubeloop rbac generate`) all come from this module.
 * For every WebApp the controller keeps a ConfigMap `<name>-web` with its settings, controlled by the WebApp, writes
 * `status` (the ConfigMap's name and the generation it reflects) and records an Event when it writes the ConfigMap.
 * Run: `node --experimental-strip-types examples/src/webapp.ts [--leader-elect]` against a cluster that has the CRD.
 */
import {
  getConfig,
  type Manager,
  newControllerManagedBy,
  newManager,
  type Reconciler,
  setupSignalHandler,
} from '@kubeloop/builder';
import { type Cached, ConfigMap, deepCopy, isNotFound, type ObjectOf } from '@kubeloop/client';
import { createOrUpdate, setControllerReference } from '@kubeloop/client/controllerutil';
import { controllerRbac, defineKind, WithRules } from '@kubeloop/crd';
import { Type } from 'typebox';

/** examples.kubeloop.dev/v1 WebApp. */
export const WebApp = defineKind({
  group: 'examples.kubeloop.dev',
  version: 'v1',
  kind: 'WebApp',
  shortNames: ['wapp'],
  spec: WithRules(
    Type.Object({
      image: Type.String({ minLength: 1, description: 'Container image, from registry.example.com.' }),
      replicas: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, default: 1 })),
      message: Type.Optional(Type.String({ maxLength: 256 })),
    }),
    [
      {
        rule: "self.image.startsWith('registry.example.com/')",
        message: 'images come from registry.example.com',
      },
    ],
  ),
  status: Type.Object({
    configMap: Type.Optional(Type.String()),
    observedGeneration: Type.Optional(Type.Integer()),
  }),
  printerColumns: [
    { name: 'Image', type: 'string', jsonPath: '.spec.image' },
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
  ],
});

/** The WebApp object type. */
export type WebAppObject = ObjectOf<typeof WebApp>;

/** What the controller needs from the API server (read by `kubeloop rbac generate`). */
export const webAppController = controllerRbac({
  name: 'webapp',
  for: WebApp,
  owns: [ConfigMap],
  calls: [
    { kind: ConfigMap, verbs: ['create', 'update'] },
    { kind: WebApp, subresource: 'status', verbs: ['update'] },
  ],
  events: true,
  leaderElection: true,
});

/** The ConfigMap kept for the WebApp `name`. */
export const configMapNameFor = (name: string): string => `${name}-web`;

/** Registers the WebApp controller on `mgr` (not started yet); the kinds are the ones `webAppController` declares. */
export function addWebAppController(mgr: Manager): void {
  const client = mgr.getClient();
  const recorder = mgr.getEventRecorderFor('webapp');
  const reconciler: Reconciler = {
    async reconcile(ctx, req) {
      let app: Cached<WebAppObject>;
      try {
        app = await client.get(WebApp, req, { signal: ctx.signal });
      } catch (err) {
        if (isNotFound(err)) return {}; // deleted: its ConfigMap goes with it (owner reference)
        throw err;
      }
      const name = configMapNameFor(req.name);
      const { result } = await createOrUpdate(client, ConfigMap, { namespace: req.namespace, name }, (cm) => {
        cm.data = {
          image: app.spec.image,
          replicas: String(app.spec.replicas ?? 1),
          message: app.spec.message ?? '',
        };
        setControllerReference(app, cm);
      });
      if (result !== 'unchanged')
        recorder.event(app, 'Normal', 'ConfigMapWritten', 'Reconcile', `ConfigMap ${name} written`);
      const generation = app.metadata?.generation;
      if (app.status?.configMap !== name || app.status?.observedGeneration !== generation) {
        await client.status().update(WebApp, {
          ...deepCopy(app),
          status: {
            configMap: name,
            ...(generation !== undefined ? { observedGeneration: generation } : {}),
          },
        });
      }
      return {};
    },
  };
  newControllerManagedBy(mgr).named(webAppController.name).for(WebApp).owns(ConfigMap).complete(reconciler);
}

async function main(): Promise<void> {
  // `--leader-elect`: replicas share a Lease in the manager's namespace (the Role `webAppController` declares)
  const leaderElect = process.argv.includes('--leader-elect');
  const mgr = newManager(getConfig(), {
    ...(leaderElect ? { leaderElection: { id: 'webapp-manager', releaseOnCancel: true } } : {}),
  });
  addWebAppController(mgr);
  await mgr.start(setupSignalHandler());
}

if (process.argv[1] === new URL(import.meta.url).pathname) await main();
