import { KubeconfigError } from './errors.js';
import { clusterTls, execClusterExtension, normaliseServer, proxyUrlOf } from './internal/cluster-fields.js';
import { bool, str } from './internal/fields.js';
import type { MergedKubeconfig } from './internal/kubeconfig-files.js';
import { type UserPart, userOf } from './internal/user-fields.js';
import { defaultWarn, type LoadRestConfigOptions } from './options.js';
import { withRedaction } from './redaction.js';
import type { RestConfig } from './rest-config.js';
import { tunables } from './user-agent.js';

/**
 * Turn a merged kubeconfig into a `RestConfig` for one context (client-go `DirectClientConfig.ClientConfig`).
 * @throws {KubeconfigError} naming the file, entry and field of the first problem found.
 */
export function restConfigFromKubeconfig(
  merged: MergedKubeconfig,
  options: LoadRestConfigOptions & { readonly context?: string } = {},
): RestConfig {
  const env = options.env ?? process.env;
  const warn = options.onWarning ?? defaultWarn;
  const files = merged.files.join(', ');
  const contextName = options.context ?? merged.currentContext?.name;
  if (!contextName) {
    throw new KubeconfigError('NoCurrentContext', 'no current context is set; pass a context to use', {
      file: files,
    });
  }
  const ctx = merged.contexts.get(contextName);
  if (!ctx) {
    throw new KubeconfigError('ContextNotFound', `context "${contextName}" not found`, { file: files });
  }
  const ctxAt = `contexts[${contextName}]`;
  const clusterName = str(ctx.value.cluster, ctx.file, `${ctxAt}.cluster`);
  if (!clusterName)
    throw new KubeconfigError('ClusterNotFound', 'no cluster named', {
      file: ctx.file,
      field: `${ctxAt}.cluster`,
    });
  const cluster = merged.clusters.get(clusterName);
  if (!cluster) {
    throw new KubeconfigError('ClusterNotFound', `cluster "${clusterName}" not found`, {
      file: ctx.file,
      field: `${ctxAt}.cluster`,
    });
  }
  const namespace = str(ctx.value.namespace, ctx.file, `${ctxAt}.namespace`);
  const cAt = `clusters[${clusterName}]`;
  const host = normaliseServer(
    str(cluster.value.server, cluster.file, `${cAt}.server`),
    cluster.file,
    `${cAt}.server`,
  );
  const tls = clusterTls(cluster.value, cluster.file, cAt);
  const proxyUrl = proxyUrlOf(
    str(cluster.value['proxy-url'], cluster.file, `${cAt}.proxy-url`),
    cluster.file,
    `${cAt}.proxy-url`,
  );
  const disableCompression = bool(
    cluster.value['disable-compression'],
    cluster.file,
    `${cAt}.disable-compression`,
  );

  let user: UserPart = {};
  const userName = str(ctx.value.user, ctx.file, `${ctxAt}.user`);
  if (userName) {
    const u = merged.users.get(userName);
    if (!u) {
      throw new KubeconfigError('UserNotFound', `user "${userName}" not found`, {
        file: ctx.file,
        field: `${ctxAt}.user`,
      });
    }
    user = userOf(u.value, u.file, `users[${userName}]`, env, execClusterExtension(cluster.value));
  }
  const { certData, keyData, certFile, keyFile, impersonate, ...auth } = user;
  const hasCredentials = Object.keys(auth).length > 0 || certData !== undefined || impersonate !== undefined;
  let credentials: Omit<UserPart, 'certData' | 'keyData' | 'impersonate'> = auth;
  let clientCert: { certData?: string; keyData?: string; certFile?: string; keyFile?: string } =
    certData && keyData ? { certData, keyData, ...(certFile && keyFile ? { certFile, keyFile } : {}) } : {};
  if (host.startsWith('http://') && hasCredentials) {
    warn(
      `${ctxAt}: server ${host} is not https; the credentials of user "${userName}" are not sent (client-go's rule)`,
    );
    credentials = {};
    clientCert = {};
  }
  const identity = host.startsWith('http://') ? {} : impersonate ? { impersonate } : {};
  return withRedaction({
    host,
    tlsClientConfig: { ...tls, ...clientCert },
    ...credentials,
    ...identity,
    ...(proxyUrl ? { proxyUrl } : {}),
    ...(disableCompression ? { disableCompression } : {}),
    ...tunables(options),
    ...(namespace ? { namespace } : {}),
  });
}
