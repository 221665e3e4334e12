/**
 * The generator's commands as functions: `init` (a new project), `createApi` and, in webhook.ts, `createWebhook`.
 * Each checks its input first (Kubernetes naming rules: a {@link NameError}, nothing written), plans every change
 * in memory and writes only when none overwrites a file the user changed (a {@link ConflictError} otherwise).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { checkGroup, checkKind, checkVersion, kebab, lowerCamel, NameError } from './names.js';
import { type FileResult, Plan } from './plan.js';
import { type Project, projectOf } from './project.js';
import { pointAtTarballs, tarballsIn } from './tarballs.js';
import {
  type ApiSpec,
  apiIndexTs,
  controllerTestTs,
  controllerTs,
  crdKustomization,
  generateCrdScript,
  kindModule,
  kindTs,
  sampleYaml,
  versionIndexTs,
} from './templates/api.js';
import { initFiles, MARK } from './templates/init.js';
import {
  conversionPatchFile,
  crdNameOf,
  generateWebhooksScript,
  type WebhookSpec,
  webhookKustomization,
  webhookServiceYaml,
  webhooksIndexTs,
  webhookTestTs,
  webhookTs,
} from './templates/webhook.js';

/** Options every command takes. */
export interface GenerateOptions {
  /** Overwrite files that differ from their templates (a user's edits are lost). @defaultValue false */
  readonly force?: boolean;
}

/** What `init` takes. */
export interface InitOptions extends GenerateOptions {
  /** The project name; default: the folder's name. Must be a DNS-1123 label of at most 56 characters. */
  readonly name?: string;
  /** The version of `@kubeloop/*` to depend on (`^version`). @defaultValue this generator's version */
  readonly kubeloopVersion?: string;
  /**
   * A folder of package tarballs (`npm run pack:local` in the kubeloop repository writes them) to install every
   * `@kubeloop/*` package and `create-kubeloop` from (`file:` dependencies plus `overrides`), instead of the registry.
   */
  readonly fromTarballs?: string;
}

/**
 * Creates a new project in `dir` (created when missing). `dir` must be empty or missing, unless `force`.
 * @throws NameError when the name is not a DNS-1123 label, `dir` is a non-empty folder (without `force`), or
 *   `fromTarballs` is not a folder holding a tarball of every kubeloop package the project depends on.
 */
export function init(dir: string, options: InitOptions = {}): FileResult[] {
  const name = options.name ?? path.basename(path.resolve(dir));
  const project = projectOf(name, options.kubeloopVersion);
  if (existsSync(dir) && readdirSync(dir).length > 0 && !options.force)
    throw new NameError(
      `${dir} exists and is not empty: init needs an empty or new folder (or --force to write over what is there)`,
    );
  const files = initFiles(project);
  if (options.fromTarballs !== undefined)
    files['package.json'] = pointAtTarballs(
      files['package.json']!,
      tarballsIn(options.fromTarballs),
      options.fromTarballs,
    );
  const plan = new Plan(dir, options.force);
  for (const [rel, text] of Object.entries(files)) plan.file(rel, text);
  return plan.commit();
}

/**
 * The project in `root`, from its package.json name. @throws NameError when `root` has no package.json (not a
 * project: run init first) or its name is not a DNS-1123 label.
 */
export function readProject(root: string): Project {
  const file = path.join(root, 'package.json');
  if (!existsSync(file))
    throw new NameError(`${root} has no package.json: run \`kubeloop init\` (or npm create kubeloop) first`);
  const pkg = JSON.parse(readFileSync(file, 'utf8')) as {
    name?: string;
    dependencies?: Record<string, string>;
  };
  const range = pkg.dependencies?.['@kubeloop/builder'];
  // a `file:` tarball (--from-tarballs) names no version: the generator's own stands in
  return projectOf(
    pkg.name ?? '',
    range && /^[\^~]?\d/.test(range) ? range.replace(/^[\^~]/, '') : undefined,
  );
}

/** What {@link createApi} takes: `--group`, `--version`, `--kind`, `--namespaced` / `--cluster`. */
export interface CreateApiOptions extends GenerateOptions {
  /** API group, a DNS-1123 subdomain with a dot (`apps.example.com`). */
  readonly group: string;
  /** API version (`v1alpha1`, `v1beta2`, `v1`). */
  readonly version: string;
  /** Kind, UpperCamelCase (`WebApp`). */
  readonly kind: string;
  /** @defaultValue 'Namespaced' */
  readonly scope?: 'Namespaced' | 'Cluster';
}

/** The versions (folders under src/api) that already define `kind`. */
export function versionsOf(root: string, kind: string): string[] {
  const api = path.join(root, 'src', 'api');
  if (!existsSync(api)) return [];
  return readdirSync(api, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(path.join(api, e.name, `${kebab(kind)}.ts`)))
    .map((e) => e.name)
    .sort();
}

/**
 * Adds a kind to the project in `root`: its schema module, a controller owning a Deployment (the first version of a
 * kind only; a later version is a non-storage version of the same CRD), the RBAC declaration, an envtest test, a
 * sample, the CRD's kustomize entry and the `generate:crd` script. Running it twice changes nothing.
 * @throws NameError for a group, version or kind that breaks Kubernetes' naming rules, or when `root` is no project;
 *   ConflictError when a file in the way was edited (without `force`). Nothing is written in either case.
 */
export function createApi(root: string, options: CreateApiOptions): FileResult[] {
  const spec: Omit<ApiSpec, 'storage'> = {
    group: checkGroup(options.group),
    version: checkVersion(options.version),
    kind: checkKind(options.kind),
    scope: options.scope ?? 'Namespaced',
  };
  readProject(root);
  const others = versionsOf(root, spec.kind).filter((v) => v !== spec.version);
  const a: ApiSpec = { ...spec, storage: others.length === 0 };
  const plan = new Plan(root, options.force);
  const file = kebab(a.kind);
  const v = lowerCamel(a.kind);

  plan.file(kindModule(a), kindTs(a));
  if (!plan.exists(`src/api/${a.version}/index.ts`))
    plan.file(`src/api/${a.version}/index.ts`, versionIndexTs(a));
  plan.insertAtMarker(`src/api/${a.version}/index.ts`, MARK.api, `export * from './${file}.js';`);
  if (!plan.exists('src/api/index.ts')) plan.file('src/api/index.ts', apiIndexTs());
  plan.insertAtMarker(
    'src/api/index.ts',
    MARK.api,
    `export * as ${a.version} from './${a.version}/index.js';`,
  );
  plan.file(`config/samples/${a.version}_${file}.yaml`, sampleYaml(a));
  if (!plan.exists('config/crd/kustomization.yaml'))
    plan.file('config/crd/kustomization.yaml', crdKustomization);
  plan.insertAtMarker('config/default/kustomization.yaml', MARK.resources, '- ../crd');
  plan.mergeJson('package.json', 'scripts', { 'generate:crd': generateCrdScript });

  if (a.storage) {
    plan.file(`src/controllers/${file}.ts`, controllerTs(a));
    plan.file(`test/${file}.test.ts`, controllerTestTs(a));
    plan.insertAtMarker(
      'src/controllers/index.ts',
      MARK.imports,
      `import { setup${a.kind}Controller, ${v}Rbac } from './${file}.js';`,
    );
    plan.insertAtMarker('src/controllers/index.ts', MARK.rbac, `${v}Rbac,`);
    plan.insertAtMarker('src/controllers/index.ts', MARK.controllers, `setup${a.kind}Controller(mgr);`);
  }
  return plan.commit();
}

/** What {@link createWebhook} takes: `--version`, `--kind` and at least one of the three kinds of webhook. */
export interface CreateWebhookOptions extends GenerateOptions {
  /** The version of the kind the webhooks serve (the hub with `conversion`). */
  readonly version: string;
  /** The kind, defined in the project by `create api`. */
  readonly kind: string;
  /** A mutating webhook that fills in defaults (`--defaulting`). */
  readonly defaulting?: boolean;
  /** A validating webhook (`--validation`). */
  readonly validation?: boolean;
  /** Conversion between `version` (the hub) and every other version of the kind (`--conversion`). */
  readonly conversion?: boolean;
}

/**
 * Adds webhooks for a kind of the project in `root`: the `defineWebhook` declaration with a defaulter, a validator
 * and conversion from every other version of the kind to `version` (the hub), as asked; the webhooks index that
 * serves them with self-signed certificates; an envtest test; the webhook Service and kustomize entries (with the
 * CRD conversion patch); the RBAC the certificates need; the `generate:webhooks` script. Idempotent.
 * @throws NameError for a bad version or kind, a kind the project does not define at that version, no webhook
 *   asked for, or `conversion` without another version; ConflictError as {@link createApi}. Nothing is written then.
 */
export function createWebhook(root: string, options: CreateWebhookOptions): FileResult[] {
  const version = checkVersion(options.version);
  const kind = checkKind(options.kind);
  const project = readProject(root);
  if (!options.defaulting && !options.validation && !options.conversion)
    throw new NameError('create webhook: ask for at least one of --defaulting, --validation, --conversion');
  const file = kebab(kind);
  const module = kindModule({ version, kind });
  if (!existsSync(path.join(root, module)))
    throw new NameError(
      `create webhook: the project has no ${kind} at version ${version} (${module}): run kubeloop create api first`,
    );
  const others = versionsOf(root, kind).filter((v) => v !== version);
  const spokes = options.conversion ? others : [];
  if (options.conversion && spokes.length === 0)
    throw new NameError(
      `create webhook --conversion: ${kind} has only version ${version}; add another first (kubeloop create api --version <v> --kind ${kind})`,
    );
  const scope = /scope: 'Cluster'/.test(readFileSync(path.join(root, module), 'utf8'))
    ? 'Cluster'
    : 'Namespaced';
  const asked: WebhookSpec = {
    version,
    kind,
    scope,
    defaulting: options.defaulting ?? false,
    validation: options.validation ?? false,
    spokes,
    operator: project.name,
  };
  const v = lowerCamel(kind);
  const plan = new Plan(root, options.force);
  const webhookFile = `src/webhooks/${file}.ts`;
  const testFile = `test/${file}-webhook.test.ts`;
  // webhooks an earlier run wrote for this kind are kept: the files are rewritten with those and the ones asked
  const onDisk = plan.read(webhookFile);
  const earlier = onDisk === undefined ? undefined : earlierWebhooks(asked, others, onDisk);
  const w: WebhookSpec = earlier
    ? {
        ...asked,
        defaulting: asked.defaulting || earlier.defaulting,
        validation: asked.validation || earlier.validation,
        spokes: asked.spokes.length > 0 ? asked.spokes : earlier.spokes,
      }
    : asked;
  if (onDisk !== undefined && !earlier && onDisk !== webhookTs(w) && !options.force)
    plan.conflict(
      `${webhookFile} differs from what create webhook wrote (edited): add the webhook to it by hand, or pass --force to rewrite it with only the webhooks asked for now (your changes are lost)`,
    );
  else plan.file(webhookFile, webhookTs(w), { replaces: earlier ? [webhookTs(earlier)] : [] });
  plan.file(testFile, webhookTestTs(w), { replaces: earlier ? [webhookTestTs(earlier)] : [] });
  if (!plan.exists('src/webhooks/index.ts')) plan.file('src/webhooks/index.ts', webhooksIndexTs(project));
  plan.insertAtMarker('src/webhooks/index.ts', MARK.imports, `import { ${v}Webhook } from './${file}.js';`);
  plan.insertAtMarker('src/webhooks/index.ts', MARK.webhooks, `${v}Webhook,`);
  plan.insertAtMarker(
    'src/webhooks/index.ts',
    MARK.serve,
    `newWebhookManagedBy(mgr).from(${v}Webhook).complete();`,
  );
  plan.insertAtMarker('src/manager.ts', MARK.imports, "import { setupWebhooks } from './webhooks/index.js';");
  plan.insertAtMarker(
    'src/manager.ts',
    MARK.setup,
    "setupWebhooks(mgr, { namespace: process.env.POD_NAMESPACE ?? 'default' });",
  );
  plan.insertAtMarker(
    'src/controllers/index.ts',
    MARK.imports,
    "import { webhookRbac } from '../webhooks/index.js';",
  );
  plan.insertAtMarker('src/controllers/index.ts', MARK.rbac, 'webhookRbac,');
  if (!plan.exists('config/webhook/kustomization.yaml'))
    plan.file('config/webhook/kustomization.yaml', webhookKustomization);
  plan.file('config/webhook/service.yaml', webhookServiceYaml(project));
  plan.insertAtMarker('config/default/kustomization.yaml', MARK.resources, '- ../webhook');
  if (spokes.length > 0) {
    const group = /group: '([^']+)'/.exec(readFileSync(path.join(root, module), 'utf8'))?.[1] ?? '';
    plan.insertAtMarker(
      'config/crd/kustomization.yaml',
      MARK.patches,
      `- path: ${conversionPatchFile(group, kind)}`,
    );
    // the manager injects its CA bundle into the converted CRD (and may patch it: webhookRbac)
    plan.insertAtMarker('src/webhooks/index.ts', MARK.crds, `'${crdNameOf(group, kind)}',`);
  }
  plan.mergeJson('package.json', 'scripts', { 'generate:webhooks': generateWebhooksScript(project) });
  return plan.commit();
}

/**
 * Which webhooks an earlier `create webhook` wrote `text` with (every combination of the three kinds, conversion
 * from any of the kind's other versions), or undefined when `text` is none of them (the user edited it).
 */
function earlierWebhooks(w: WebhookSpec, others: readonly string[], text: string): WebhookSpec | undefined {
  const subsets: string[][] = [[]];
  for (const o of others) for (const s of subsets.slice()) subsets.push([...s, o]);
  for (const defaulting of [false, true])
    for (const validation of [false, true])
      for (const spokes of subsets) {
        const spec = { ...w, defaulting, validation, spokes };
        if ((defaulting || validation || spokes.length > 0) && webhookTs(spec) === text) return spec;
      }
  return undefined;
}
