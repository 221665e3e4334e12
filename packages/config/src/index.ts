/**
 * @packageDocumentation
 * `@kubeloop/config` holds the {@link RestConfig} — what it takes to reach and trust one API server — and
 * the rules by which it is found: `--kubeconfig` flag, `KUBECONFIG`, in-cluster, `~/.kube/config`
 * (controller-runtime's `pkg/client/config`, client-go's `clientcmd` merge rules), plus the
 * {@link CredentialProvider} that keeps credentials fresh (token files, exec plugins).
 */
export {
  CachedFileToken,
  type CredentialProviderOptions,
  credentialProviderFor,
} from './credential-provider.js';
export { DEFAULT_BURST, DEFAULT_QPS, KUBELOOP_VERSION, SERVICE_ACCOUNT_DIR } from './defaults.js';
export {
  CredentialError,
  type CredentialErrorCode,
  KubeconfigError,
  type KubeconfigErrorCode,
} from './errors.js';
export {
  DEFAULT_EXEC_TIMEOUT_MS,
  type ExecCredentialResult,
  ExecCredentialSource,
  type ExecCredentialSourceOptions,
  type ExecRunListener,
} from './exec-credential.js';
export { userHomeDir } from './home-dir.js';
export { inClusterConfig } from './in-cluster.js';
export { getConfig, getConfigOrDie, loadRestConfig, loadRestConfigFromFiles } from './load-rest-config.js';
export type { LoadRestConfigOptions } from './options.js';
export { redactedRestConfig, withRedaction } from './redaction.js';
export type {
  AuthProviderConfig,
  CredentialProvider,
  ExecConfig,
  ImpersonationConfig,
  RequestCredentials,
  RestConfig,
  TLSClientConfig,
} from './rest-config.js';
export { defaultUserAgent } from './user-agent.js';
