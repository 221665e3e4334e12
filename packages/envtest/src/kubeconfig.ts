/** Writing a kubeconfig file for a server (mode 0600), and reading the current one for USE_EXISTING_CLUSTER. */
import { access, chmod, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { loadRestConfig, type RestConfig, userHomeDir } from '@kubeloop/config';
import { stringify } from 'yaml';
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

/**
 * Load the cluster the current kubeconfig points at, with `@kubeloop/config`'s loader (client-go's loading
 * rules: `KUBECONFIG` path list merged, else in-cluster, else `~/.kube/config`; contexts, exec plugins,
 * tokens, client certificates, proxies), as controller-runtime's envtest calls `config.GetConfig` for
 * `USE_EXISTING_CLUSTER`. QPS 1000 / burst 2000 like the embedded server's config. `path` is the first
 * existing kubeconfig file, or undefined for an in-cluster config.
 * @throws EnvtestError `ENVTEST_KUBECONFIG` (cause: the loader's KubeconfigError) when nothing usable is found.
 */
export async function loadCurrentKubeconfig(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ config: RestConfig; path: string | undefined }> {
  let config: RestConfig;
  try {
    config = loadRestConfig({ env, argv: [], qps: 1000, burst: 2000, userAgent: 'kubeloop-envtest' });
  } catch (e) {
    throw new EnvtestError(
      'ENVTEST_KUBECONFIG',
      `cannot use the existing cluster: ${e instanceof Error ? e.message : String(e)}`,
      { cause: e },
    );
  }
  const candidates = env.KUBECONFIG
    ? env.KUBECONFIG.split(delimiter).filter(Boolean)
    : [join(userHomeDir(env, process.platform) ?? homedir(), '.kube', 'config')];
  let path: string | undefined;
  for (const p of candidates)
    if (
      await access(p).then(
        () => true,
        () => false,
      )
    ) {
      path = p;
      break;
    }
  return { config, path };
}
