/**
 * What the `kubeloop` CLI's commands share: its I/O, its usage error, loading the modules a command names and
 * collecting the kinds, RBAC declarations and webhook declarations they export, writing generated files, and
 * reading CRDs from a cluster.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { kind, newClient } from '@kubeloop/client';
import { getConfig } from '@kubeloop/config';
import { isCustomResourceKind } from './kind.js';
import { isControllerRbac } from './rbac.js';
import type { CustomResourceDefinition } from './types.js';

/** Where the CLI writes and reads; the bin passes the process's, tests their own. */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly cwd: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** A bad command line or argument: printed as one line, exit 2. */
export class UsageError extends Error {}

/** Where the API server reaches the webhooks, as `kubeloop webhook generate` passes it to the renderer. */
export interface WebhookTarget {
  readonly name: string;
  readonly service?: { readonly name: string; readonly namespace: string; readonly port?: number };
  readonly url?: string;
  readonly caBundle?: string;
}

/**
 * A webhook declaration (`defineWebhook` of @kubeloop/webhook), found by its brand. The layering keeps this
 * package from importing the webhook package, so the declaration carries its package's renderer and the CLI
 * calls it on every declaration found.
 */
export interface WebhookDeclarationLike {
  readonly webhookDeclaration: true;
  readonly renderManifests: (
    declarations: readonly WebhookDeclarationLike[],
    target: WebhookTarget,
  ) => Record<string, unknown>[];
}

/** Whether `v` is a webhook declaration (by its brand and its renderer). */
export function isWebhookDeclaration(v: unknown): v is WebhookDeclarationLike {
  return (
    typeof v === 'object' &&
    v !== null &&
    (v as { webhookDeclaration?: unknown }).webhookDeclaration === true &&
    typeof (v as { renderManifests?: unknown }).renderManifests === 'function'
  );
}

/** The options of `webhook generate`, as commander parses them. */
export interface WebhookGenerateOptions {
  readonly out: string;
  readonly crdPatches: string;
  readonly stdout?: boolean;
  readonly name: string;
  readonly service: string;
  readonly port?: number;
  readonly url?: string;
  readonly caBundle?: string;
}

/** `--port`: an integer from 1 to 65535, else a UsageError. */
export function parsePort(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new UsageError(`--port: not a port number: ${v}`);
  return n;
}

/** The values a module exports, its default export and arrays among them (one level): where kinds are found. */
export function exportedValues(mod: Record<string, unknown>): unknown[] {
  const out: unknown[] = [];
  for (const v of Object.values(mod)) {
    if (Array.isArray(v)) for (const x of v) out.push(x);
    else if (
      typeof v === 'object' &&
      v !== null &&
      !isCustomResourceKind(v) &&
      !isControllerRbac(v) &&
      !isWebhookDeclaration(v) &&
      v !== mod
    )
      out.push(v, ...Object.values(v).flatMap((x) => (Array.isArray(x) ? x : [x])));
    else out.push(v);
  }
  return out;
}

/** Imports a module the command line names (relative to `cwd`); a missing or unloadable module is a UsageError. */
export async function loadModule(spec: string, cwd: string): Promise<Record<string, unknown>> {
  const file = path.resolve(cwd, spec);
  try {
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why =
      e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'ENOENT'
        ? 'cannot find the module'
        : String(e.message).split('\n')[0];
    if (e.code === 'ERR_UNKNOWN_FILE_EXTENSION')
      throw new UsageError(
        `${spec}: cannot load a .ts module on this Node: pass the built .js module, or run under a TypeScript loader (node --import tsx)`,
      );
    throw new UsageError(`${spec}: ${why}`);
  }
}

/** The distinct values of kind `what` that `modules` export; a module exporting none is a UsageError. */
export async function collect<T>(
  modules: readonly string[],
  cwd: string,
  is: (v: unknown) => v is T,
  what: string,
): Promise<T[]> {
  const found: T[] = [];
  for (const m of modules) {
    const mod = await loadModule(m, cwd);
    const here = [...new Set(exportedValues(mod).filter(is))];
    if (here.length === 0) throw new UsageError(`${m}: exports no ${what}`);
    for (const v of here) if (!found.includes(v)) found.push(v);
  }
  return found;
}

/** The "generated, do not edit" line written at the top of every generated file. */
export function header(command: string, sources: readonly string[]): string {
  return `Code generated by kubeloop ${command} from ${sources.join(', ')}. DO NOT EDIT.`;
}

/** Writes `text` to `file` (relative to the CLI's cwd), creating its folder. */
export function write(io: CliIo, file: string, text: string): void {
  const full = path.resolve(io.cwd, file);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, text);
}

/** Reads CRDs installed in a cluster through the client (kubeconfig loading order of `getConfig`). */
export async function crdsFromCluster(
  io: CliIo,
  opts: { kubeconfig?: string; context?: string },
  names: readonly string[],
) {
  const config = getConfig({
    ...(opts.kubeconfig ? { kubeconfig: opts.kubeconfig } : {}),
    ...(opts.context ? { context: opts.context } : {}),
    argv: [],
    env: io.env ?? process.env,
  });
  const client = newClient(config);
  try {
    const list = await client.list(
      kind<CustomResourceDefinition>('apiextensions.k8s.io/v1', 'CustomResourceDefinition'),
    );
    const all = list.items;
    if (names.length === 0) return all;
    const picked = all.filter((c) => names.includes(c.metadata.name));
    const missing = names.filter((n) => !picked.some((c) => c.metadata.name === n));
    if (missing.length > 0)
      throw new UsageError(`no CustomResourceDefinition ${missing.join(', ')} in the cluster`);
    return picked;
  } finally {
    await client.close();
  }
}
