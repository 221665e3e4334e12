import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command, CommanderError } from 'commander';
import {
  type CliIo,
  collect,
  crdsFromCluster,
  header,
  isWebhookDeclaration,
  parsePort,
  UsageError,
  type WebhookDeclarationLike,
  type WebhookGenerateOptions,
  type WebhookTarget,
  write,
} from './cli-support.js';
import { customResourceDefinitions } from './crd.js';
import { SchemaError } from './errors.js';
import { type CustomResourceKind, isCustomResourceKind } from './kind.js';
import { type ControllerRbac, isControllerRbac, rbacManifests } from './rbac.js';
import { readCrdFiles, typesFromCrds } from './typegen.js';
import type { CustomResourceDefinition } from './types.js';
import { toYaml } from './yaml.js';

export type { CliIo } from './cli-support.js';

function program(io: CliIo, version: string): Command {
  const root = new Command('kubeloop')
    .description('Generate CRDs, types, RBAC and webhook configurations for kubeloop operators.')
    .version(version)
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: () => {} })
    .showHelpAfterError(false);
  const crd = root
    .command('crd')
    .description('CustomResourceDefinitions from schemas, and types from CRDs')
    .exitOverride();
  crd
    .command('generate')
    .description('write the CRDs of the kinds (defineKind) a module exports, one YAML file per CRD')
    .argument(
      '<module...>',
      'built JS modules (or .ts under a TypeScript loader) whose exports include kinds',
    )
    .option('-o, --out <dir>', 'output directory', 'config/crd')
    .option('--stdout', 'print one YAML stream instead of writing files')
    .exitOverride()
    .action(async (modules: string[], o: { out: string; stdout?: boolean }) => {
      const kinds = await collect<CustomResourceKind>(
        modules,
        io.cwd,
        isCustomResourceKind,
        'kinds (defineKind)',
      );
      const crds = customResourceDefinitions(kinds);
      const head = header('crd generate', modules);
      if (o.stdout) {
        io.stdout(toYaml(crds, head));
        return;
      }
      for (const c of crds) {
        const file = path.join(o.out, `${c.spec.group}_${c.spec.names.plural}.yaml`);
        write(io, file, toYaml([c], head));
        io.stderr(`wrote ${file}\n`);
      }
    });
  crd
    .command('types')
    .description(
      'write TypeScript types and kind descriptors for existing CRDs (files, folders, or a cluster)',
    )
    .argument('[crd...]', 'CRD YAML/JSON files or folders; with --from-cluster, CRD names (default: all)')
    .option('-o, --out <dir>', 'output directory', 'src/generated')
    .option('--from-cluster', 'read the CRDs installed in the cluster through the client')
    .option('--kubeconfig <path>', 'kubeconfig for --from-cluster')
    .option('--context <name>', 'kubeconfig context for --from-cluster')
    .exitOverride()
    .action(
      async (
        inputs: string[],
        o: { out: string; fromCluster?: boolean; kubeconfig?: string; context?: string },
      ) => {
        let crds: CustomResourceDefinition[];
        if (o.fromCluster) crds = await crdsFromCluster(io, o, inputs);
        else {
          if (inputs.length === 0)
            throw new UsageError('crd types: give CRD files or folders, or --from-cluster');
          try {
            crds = readCrdFiles(inputs.map((p) => path.resolve(io.cwd, p)));
          } catch (err) {
            throw new UsageError(err instanceof Error ? err.message : String(err));
          }
        }
        if (crds.length === 0)
          throw new UsageError('crd types: no apiextensions.k8s.io/v1 CustomResourceDefinition found');
        const files = await typesFromCrds(crds);
        for (const [name, text] of files) {
          write(io, path.join(o.out, name), text);
          io.stderr(`wrote ${path.join(o.out, name)}\n`);
        }
      },
    );
  const rbac = root.command('rbac').description('RBAC from controller declarations').exitOverride();
  rbac
    .command('generate')
    .description('write the ClusterRole (or Role) the controllers a module declares (controllerRbac) need')
    .argument('<module...>', 'built JS modules whose exports include controllerRbac declarations')
    .option('-o, --out <file>', 'output file', 'config/rbac/role.yaml')
    .option('--stdout', 'print the YAML instead of writing the file')
    .option('--name <name>', 'name of the (Cluster)Role', 'manager-role')
    .option(
      '--namespace <ns>',
      "the manager's namespace (the leader-election Role; with --namespaced, the Role)",
    )
    .option('--namespaced', 'a Role in --namespace instead of a ClusterRole')
    .option('--service-account <ns/name>', 'add bindings to this ServiceAccount')
    .exitOverride()
    .action(
      async (
        modules: string[],
        o: {
          out: string;
          stdout?: boolean;
          name: string;
          namespace?: string;
          namespaced?: boolean;
          serviceAccount?: string;
        },
      ) => {
        const decls = await collect<ControllerRbac>(
          modules,
          io.cwd,
          isControllerRbac,
          'controller declarations (controllerRbac)',
        );
        let manifests: Record<string, unknown>[];
        try {
          manifests = rbacManifests(decls, {
            name: o.name,
            ...(o.namespace ? { namespace: o.namespace } : {}),
            ...(o.namespaced ? { namespaced: true } : {}),
            ...(o.serviceAccount ? { serviceAccount: o.serviceAccount } : {}),
          });
        } catch (err) {
          throw new UsageError(err instanceof Error ? err.message : String(err));
        }
        const text = toYaml(manifests, header('rbac generate', modules));
        if (o.stdout) io.stdout(text);
        else {
          write(io, o.out, text);
          io.stderr(`wrote ${o.out}\n`);
        }
      },
    );
  const webhook = root
    .command('webhook')
    .description('admission webhook configurations and CRD conversion from webhook declarations')
    .exitOverride();
  webhook
    .command('generate')
    .description(
      'write the Mutating/ValidatingWebhookConfiguration of the webhooks a module declares (defineWebhook), and the conversion stanza of each converted CRD',
    )
    .argument('<module...>', 'built JS modules whose exports include webhook declarations (defineWebhook)')
    .option(
      '-o, --out <dir>',
      'output directory of manifests.yaml (the two configurations)',
      'config/webhook',
    )
    .option(
      '--crd-patches <dir>',
      'output directory of webhook_in_<plural>.yaml (a CRD conversion stanza each)',
      'config/crd/patches',
    )
    .option('--stdout', 'print one YAML stream instead of writing files')
    .option('--name <name>', 'name of both configurations', 'kubeloop-webhook-configuration')
    .option(
      '--service <namespace/name>',
      'the Service in front of the webhook server',
      'system/webhook-service',
    )
    .option('--port <port>', "the Service port (default: the API server's 443)", parsePort)
    .option('--url <base>', 'a base URL such as https://127.0.0.1:9443 instead of the Service')
    .option(
      '--ca-bundle <file>',
      'PEM file of the CA that signed the serving certificate (written as caBundle)',
    )
    .exitOverride()
    .action(async (modules: string[], o: WebhookGenerateOptions) => {
      const decls = await collect<WebhookDeclarationLike>(
        modules,
        io.cwd,
        isWebhookDeclaration,
        'webhook declarations (defineWebhook)',
      );
      const [ns, svc, extra] = o.service.split('/');
      if (!o.url && (!ns || !svc || extra !== undefined))
        throw new UsageError(`--service: give <namespace>/<name>, got ${o.service}`);
      let caBundle: string | undefined;
      if (o.caBundle) {
        let pem: string;
        try {
          pem = readFileSync(path.resolve(io.cwd, o.caBundle), 'utf8');
        } catch {
          throw new UsageError(`--ca-bundle: cannot read ${o.caBundle}`);
        }
        if (!pem.includes('-----BEGIN CERTIFICATE-----'))
          throw new UsageError(`--ca-bundle: ${o.caBundle} holds no PEM certificate`);
        caBundle = Buffer.from(pem).toString('base64');
      }
      const target: WebhookTarget = {
        name: o.name,
        ...(o.url
          ? { url: o.url }
          : {
              service: {
                namespace: ns as string,
                name: svc as string,
                ...(o.port !== undefined ? { port: o.port } : {}),
              },
            }),
        ...(caBundle ? { caBundle } : {}),
      };
      const [first] = decls as [WebhookDeclarationLike];
      const manifests = first.renderManifests(decls, target);
      const head = header('webhook generate', modules);
      if (o.stdout) {
        io.stdout(toYaml(manifests, head));
        return;
      }
      const configs = manifests.filter((m) => m.kind !== 'CustomResourceDefinition');
      if (configs.length > 0) {
        const file = path.join(o.out, 'manifests.yaml');
        write(io, file, toYaml(configs, head));
        io.stderr(`wrote ${file}\n`);
      }
      for (const m of manifests.filter((x) => x.kind === 'CustomResourceDefinition')) {
        const crdName = (m.metadata as { name: string }).name;
        const dot = crdName.indexOf('.');
        const file = path.join(
          o.crdPatches,
          `webhook_in_${crdName.slice(dot + 1)}_${crdName.slice(0, dot)}.yaml`,
        );
        write(io, file, toYaml([m], head));
        io.stderr(`wrote ${file}\n`);
      }
    });
  return root;
}

/** The generator's entry point, as `create-kubeloop` exports it. */
type GeneratorCli = (argv: readonly string[], io: CliIo) => Promise<number>;

/**
 * `kubeloop init` and `kubeloop create …` belong to the project generator, the `create-kubeloop` package, which sits
 * above this one (it scaffolds projects that use crd, webhook and builder). As kubectl finds a plugin on the PATH,
 * the CLI looks the generator up at run time — in the project (its devDependency), then beside this package — and
 * hands it the command line, so no package dependency points upwards. Exit 2 when it is not installed.
 */
async function handToGenerator(argv: readonly string[], io: CliIo): Promise<number> {
  let resolved: string | undefined;
  for (const from of [path.join(io.cwd, 'package.json'), fileURLToPath(import.meta.url)]) {
    try {
      resolved = createRequire(from).resolve('create-kubeloop');
      break;
    } catch {
      // not installed there: try the next place
    }
  }
  const run = resolved
    ? ((await import(pathToFileURL(resolved).href)) as { runCreateKubeloop?: GeneratorCli }).runCreateKubeloop
    : undefined;
  if (typeof run !== 'function') {
    io.stderr(
      `kubeloop: ${argv[0]} needs the project generator: npm i -D create-kubeloop (or start with npm create kubeloop@latest)\n`,
    );
    return 2;
  }
  return run(argv, io);
}

/**
 * Runs the `kubeloop` CLI on `argv` (without `node` and the script); `init` and `create` go to the `create-kubeloop`
 * generator (installed in the project). Returns the exit code: 0 done; 1 the
 * generation failed (a schema kube cannot express, a CEL rule that does not compile, an unreachable cluster),
 * printed as one line; 2 a bad command line or argument (unknown command or option, missing module, a module
 * without kinds), printed as one line.
 */
export async function runCli(argv: readonly string[], io: CliIo, version = '0.0.0'): Promise<number> {
  if (argv[0] === 'init' || argv[0] === 'create') return handToGenerator(argv, io);
  const cmd = program(io, version);
  try {
    await cmd.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
      if (err.code === 'commander.help') {
        io.stderr(`kubeloop: missing command: ${argv.join(' ') || 'kubeloop'} needs one (see --help)\n`);
        return 2;
      }
      io.stderr(`kubeloop: ${err.message.replace(/^error: /, '').split('\n')[0]}\n`);
      return 2;
    }
    if (err instanceof UsageError) {
      io.stderr(`kubeloop: ${err.message.split('\n')[0]}\n`);
      return 2;
    }
    if (err instanceof SchemaError) {
      io.stderr(`kubeloop: ${err.message.split('\n')[0]}\n`);
      return 1;
    }
    io.stderr(`kubeloop: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}\n`);
    return 1;
  }
}
