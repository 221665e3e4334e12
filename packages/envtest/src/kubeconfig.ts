/** Writing a kubeconfig file for a server (mode 0600), and reading the current one for USE_EXISTING_CLUSTER. */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import type { RestConfig } from '@kubeloop/config';
import { parse, stringify } from 'yaml';
import { EnvtestError } from './errors.js';

/** What a kubeconfig for one server holds. */
export interface KubeconfigSpec {
  readonly server: string;
  readonly caPem: string;
  readonly token?: string;
  readonly clientCertPem?: string;
  readonly clientKeyPem?: string;
  /** Cluster/context/user name (default `envtest`). */
  readonly name?: string;
  readonly namespace?: string;
}

/** Render a kubeconfig (YAML) with certificate-authority-data and a token or client cert. */
export function renderKubeconfig(spec: KubeconfigSpec): string {
  const name = spec.name ?? 'envtest';
  const user: Record<string, string> = {};
  if (spec.token) user.token = spec.token;
  if (spec.clientCertPem)
    user['client-certificate-data'] = Buffer.from(spec.clientCertPem).toString('base64');
  if (spec.clientKeyPem) user['client-key-data'] = Buffer.from(spec.clientKeyPem).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name,
        cluster: {
          server: spec.server,
          'certificate-authority-data': Buffer.from(spec.caPem).toString('base64'),
        },
      },
    ],
    users: [{ name, user }],
    contexts: [
      {
        name,
        context: { cluster: name, user: name, ...(spec.namespace ? { namespace: spec.namespace } : {}) },
      },
    ],
    'current-context': name,
    preferences: {},
  });
}

/** Write a kubeconfig with mode 0600 (also tightening an existing file's mode). */
export async function writeKubeconfig(path: string, spec: KubeconfigSpec): Promise<void> {
  await writeFile(path, renderKubeconfig(spec), { mode: 0o600 });
  await chmod(path, 0o600);
}

type Named<T> = { name?: string } & T;

/**
 * Read the current kubeconfig the way client-go's loading rules find it (KUBECONFIG path list, first file
 * defining each name wins; else ~/.kube/config) and produce a RestConfig for its current context.
 * Supports certificate-authority(-data), token(-file), client-certificate(-data)/client-key(-data),
 * insecure-skip-tls-verify and tls-server-name. Exec plugins are not run here.
 * @throws EnvtestError `ENVTEST_KUBECONFIG` when no usable kubeconfig or context is found.
 */
export async function loadCurrentKubeconfig(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ config: RestConfig; path: string }> {
  const list = env.KUBECONFIG
    ? env.KUBECONFIG.split(delimiter).filter(Boolean)
    : [join(env.HOME ?? homedir(), '.kube', 'config')];
  const clusters = new Map<string, Record<string, unknown> & { __dir: string }>();
  const users = new Map<string, Record<string, unknown> & { __dir: string }>();
  const contexts = new Map<string, Record<string, unknown>>();
  let current: string | undefined;
  let firstPath: string | undefined;
  for (const p of list) {
    let text: string;
    try {
      text = await readFile(p, 'utf8');
    } catch {
      continue;
    }
    firstPath ??= p;
    const doc = (parse(text) ?? {}) as Record<string, unknown>;
    const dir = dirname(resolve(p));
    for (const c of (doc.clusters ?? []) as Named<{ cluster?: Record<string, unknown> }>[])
      if (c.name && !clusters.has(c.name)) clusters.set(c.name, { ...(c.cluster ?? {}), __dir: dir });
    for (const u of (doc.users ?? []) as Named<{ user?: Record<string, unknown> }>[])
      if (u.name && !users.has(u.name)) users.set(u.name, { ...(u.user ?? {}), __dir: dir });
    for (const c of (doc.contexts ?? []) as Named<{ context?: Record<string, unknown> }>[])
      if (c.name && !contexts.has(c.name)) contexts.set(c.name, c.context ?? {});
    if (!current && typeof doc['current-context'] === 'string' && doc['current-context'])
      current = doc['current-context'];
  }
  if (!firstPath)
    throw new EnvtestError('ENVTEST_KUBECONFIG', `no kubeconfig found (looked at ${list.join(', ')})`);
  if (!current)
    throw new EnvtestError('ENVTEST_KUBECONFIG', `kubeconfig ${firstPath} has no current-context`);
  const ctx = contexts.get(current);
  if (!ctx) throw new EnvtestError('ENVTEST_KUBECONFIG', `context "${current}" not found in the kubeconfig`);
  const cluster = clusters.get(String(ctx.cluster ?? ''));
  if (!cluster || typeof cluster.server !== 'string')
    throw new EnvtestError(
      'ENVTEST_KUBECONFIG',
      `cluster "${String(ctx.cluster)}" of context "${current}" not found`,
    );
  const user = users.get(String(ctx.user ?? '')) ?? { __dir: cluster.__dir };
  const abs = (dir: string, f: unknown) => (isAbsolute(String(f)) ? String(f) : join(dir, String(f)));
  const readPem = async (data: unknown, file: unknown, dir: string): Promise<string | undefined> => {
    if (typeof data === 'string' && data) return Buffer.from(data, 'base64').toString('utf8');
    if (typeof file === 'string' && file) return readFile(abs(dir, file), 'utf8');
    return undefined;
  };
  const caData = await readPem(
    cluster['certificate-authority-data'],
    cluster['certificate-authority'],
    cluster.__dir,
  );
  const certData = await readPem(user['client-certificate-data'], user['client-certificate'], user.__dir);
  const keyData = await readPem(user['client-key-data'], user['client-key'], user.__dir);
  const config: RestConfig = {
    host: cluster.server,
    tlsClientConfig: {
      ...(caData ? { caData } : {}),
      ...(certData ? { certData } : {}),
      ...(keyData ? { keyData } : {}),
      ...(typeof cluster['tls-server-name'] === 'string' ? { serverName: cluster['tls-server-name'] } : {}),
      ...(cluster['insecure-skip-tls-verify'] === true ? { insecure: true } : {}),
    },
    ...(typeof user.token === 'string' ? { bearerToken: user.token } : {}),
    ...(typeof user.tokenFile === 'string' ? { bearerTokenFile: abs(user.__dir, user.tokenFile) } : {}),
    qps: 1000,
    burst: 2000,
    timeoutMs: 0,
    userAgent: 'kubeloop-envtest',
  };
  return { config, path: firstPath };
}
