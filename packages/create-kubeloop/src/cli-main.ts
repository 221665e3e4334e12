import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { createApi, createWebhook, init } from './generator.js';
import { NameError } from './names.js';
import { ConflictError, type FileResult } from './plan.js';
import { GENERATOR_VERSION } from './project.js';

/** Where the CLI writes and which folder it works in; the bin passes the process's, tests their own. */
export interface CreateIo {
  /** Writes what was done (one line per file). */
  readonly stdout: (text: string) => void;
  /** Writes the one-line error. */
  readonly stderr: (text: string) => void;
  /** The folder commands work in (the project for `create`). */
  readonly cwd: string;
}

/** A bad command line: one line, exit 2. */
class UsageError extends Error {}

function report(io: CreateIo, results: readonly FileResult[]): void {
  for (const r of results) if (r.action !== 'unchanged') io.stdout(`${r.action.padEnd(11)} ${r.path}\n`);
  const same = results.filter((r) => r.action === 'unchanged').length;
  if (same > 0) io.stdout(`unchanged   ${same} file${same === 1 ? '' : 's'}\n`);
}

/** The options `create-kubeloop <dir>` and `init` share. */
interface InitFlags {
  name?: string;
  force?: boolean;
  fromTarballs?: string;
}

function initAndReport(io: CreateIo, dir: string, o: InitFlags): void {
  const target = path.resolve(io.cwd, dir);
  report(
    io,
    init(target, {
      ...(o.name ? { name: o.name } : {}),
      ...(o.force ? { force: true } : {}),
      ...(o.fromTarballs ? { fromTarballs: path.resolve(io.cwd, o.fromTarballs) } : {}),
    }),
  );
  const cd = path.relative(io.cwd, target);
  io.stdout(
    `\nNext:\n${cd ? `  cd ${cd}\n` : ''}  npm install\n  npx kubeloop create api --group apps.example.com --version v1alpha1 --kind WebApp\n  npm test && npm run dev\n`,
  );
}

const TARBALLS_HELP =
  'install @kubeloop/* and create-kubeloop from the tarballs in this folder (npm run pack:local writes them), not the registry';

function program(io: CreateIo): Command {
  const root = new Command('create-kubeloop')
    .description('Scaffold a kubeloop operator: a new project, then APIs and webhooks in it.')
    .version(GENERATOR_VERSION)
    // `--version` after a subcommand is create api's option, not the program's
    .enablePositionalOptions()
    .argument('[dir]', 'folder of the new project (created; must be empty)')
    .option('--name <name>', 'project name (default: the folder name)')
    .option('--force', 'write into a non-empty folder, overwriting files that differ')
    .option('--from-tarballs <dir>', TARBALLS_HELP)
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: () => {} })
    .action((dir: string | undefined, o: InitFlags) => {
      if (dir === undefined)
        throw new UsageError('give the folder of the new project: create-kubeloop my-operator');
      initAndReport(io, dir, o);
    });
  root
    .command('init')
    .description('create a new project in the current folder (or --dir)')
    .option('--dir <dir>', 'folder of the new project', '.')
    .option('--name <name>', 'project name (default: the folder name)')
    .option('--force', 'write into a non-empty folder, overwriting files that differ')
    .option('--from-tarballs <dir>', TARBALLS_HELP)
    .exitOverride()
    .action((o: InitFlags & { dir: string }) => initAndReport(io, o.dir, o));
  const create = root.command('create').description('add an API or a webhook to the project').exitOverride();
  create
    .command('api')
    .description('add a kind (schema, CRD), its controller, RBAC and an envtest test')
    .requiredOption('--group <group>', 'API group, a domain: apps.example.com')
    .requiredOption('--version <version>', 'API version: v1alpha1, v1beta1, v1')
    .requiredOption('--kind <kind>', 'kind, UpperCamelCase: WebApp')
    .option('--namespaced', 'namespaced objects (the default)')
    .option('--cluster', 'cluster-scoped objects')
    .option('--force', 'overwrite files that differ from their templates')
    .exitOverride()
    .action(
      (o: {
        group: string;
        version: string;
        kind: string;
        namespaced?: boolean;
        cluster?: boolean;
        force?: boolean;
      }) => {
        if (o.namespaced && o.cluster) throw new UsageError('--namespaced and --cluster exclude each other');
        report(
          io,
          createApi(io.cwd, {
            group: o.group,
            version: o.version,
            kind: o.kind,
            scope: o.cluster ? 'Cluster' : 'Namespaced',
            ...(o.force ? { force: true } : {}),
          }),
        );
      },
    );
  create
    .command('webhook')
    .description('add defaulting, validating and conversion webhooks for a kind, with an envtest test')
    .requiredOption(
      '--version <version>',
      'the version of the kind the webhooks serve (the hub for --conversion)',
    )
    .requiredOption('--kind <kind>', 'kind, UpperCamelCase: WebApp')
    .option('--defaulting', 'a mutating webhook that fills in defaults')
    .option('--validation', 'a validating webhook')
    .option('--conversion', "conversion between --version and the kind's other versions")
    .option('--force', 'overwrite files that differ from their templates')
    .exitOverride()
    .action(
      (o: {
        version: string;
        kind: string;
        defaulting?: boolean;
        validation?: boolean;
        conversion?: boolean;
        force?: boolean;
      }) => {
        report(
          io,
          createWebhook(io.cwd, {
            version: o.version,
            kind: o.kind,
            ...(o.defaulting ? { defaulting: true } : {}),
            ...(o.validation ? { validation: true } : {}),
            ...(o.conversion ? { conversion: true } : {}),
            ...(o.force ? { force: true } : {}),
          }),
        );
      },
    );
  return root;
}

/**
 * Runs the generator CLI on `argv` (without `node` and the script): `create-kubeloop <dir>` / `init` (a new project),
 * `create api`, `create webhook`. The `kubeloop` CLI of `@kubeloop/crd` hands its `init` and `create` commands to this
 * function. Returns the exit code: 0 done; 1 a file in the way was edited (nothing written; `--force` overwrites); 2 a
 * bad command line or a name that breaks a Kubernetes naming rule (nothing written). Errors are one line on stderr.
 */
export async function runCreateKubeloop(argv: readonly string[], io: CreateIo): Promise<number> {
  try {
    await program(io).parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
      io.stderr(`create-kubeloop: ${err.message.replace(/^error: /, '').split('\n')[0]}\n`);
      return 2;
    }
    if (err instanceof UsageError || err instanceof NameError) {
      io.stderr(`create-kubeloop: ${err.message.split('\n')[0]}\n`);
      return 2;
    }
    if (err instanceof ConflictError) {
      io.stderr(`create-kubeloop: nothing written: ${err.message.split('\n')[0]}\n`);
      return 1;
    }
    io.stderr(`create-kubeloop: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}\n`);
    return 1;
  }
}
