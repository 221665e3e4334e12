import fs from 'node:fs';
import path from 'node:path';
import { SERVICE_ACCOUNT_DIR } from './defaults.js';
import { KubeconfigError } from './errors.js';
import { invalidCertificateBundle } from './internal/pem.js';
import { defaultWarn, type Env, type LoadRestConfigOptions } from './options.js';
import { withRedaction } from './redaction.js';
import type { RestConfig } from './rest-config.js';
import { tunables } from './user-agent.js';

/** Whether the pod environment (`KUBERNETES_SERVICE_HOST` and `_PORT`) is present. */
export function isInClusterPossible(env: Env): boolean {
  return Boolean(env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT);
}

/**
 * The in-cluster config from a pod's service account (client-go `rest.InClusterConfig`): host from
 * `KUBERNETES_SERVICE_HOST`/`_PORT` (IPv6-safe), token from `<dir>/token` set as both `bearerToken` and
 * `bearerTokenFile` (so it is re-read), CA from `<dir>/ca.crt`. A CA that cannot be read or is not a PEM
 * certificate bundle is only a warning and is not used (client-go logs it and goes on with the system roots).
 * @throws {KubeconfigError} `NotInCluster` when the env vars are missing or the token cannot be read.
 */
export function inClusterConfig(options: LoadRestConfigOptions = {}): RestConfig {
  const env = options.env ?? process.env;
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new KubeconfigError(
      'NotInCluster',
      'unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined',
    );
  }
  const dir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const tokenFile = path.join(dir, 'token');
  let token: string;
  try {
    token = fs.readFileSync(tokenFile, 'utf8').trim();
  } catch (e) {
    throw new KubeconfigError(
      'NotInCluster',
      `cannot read service account token (${(e as NodeJS.ErrnoException).code})`,
      { file: tokenFile },
    );
  }
  const warn = options.onWarning ?? defaultWarn;
  const caFile = path.join(dir, 'ca.crt');
  let caData: string | undefined;
  try {
    caData = fs.readFileSync(caFile, 'utf8');
  } catch {
    warn(`in-cluster: cannot read ${caFile}; using the system roots`);
  }
  const invalid = caData === undefined ? undefined : invalidCertificateBundle(caData);
  if (invalid) {
    warn(`in-cluster: ${caFile} ${invalid}; using the system roots`);
    caData = undefined;
  }
  const hostPort = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  let namespace = env.POD_NAMESPACE || undefined;
  if (!namespace) {
    try {
      namespace = fs.readFileSync(path.join(dir, 'namespace'), 'utf8').trim() || undefined;
    } catch {
      // client-go falls back to "default"
    }
  }
  return withRedaction({
    host: `https://${hostPort}`,
    tlsClientConfig: caData ? { caData, caFile } : {},
    bearerToken: token,
    bearerTokenFile: tokenFile,
    ...tunables(options),
    namespace: namespace ?? 'default',
  });
}
