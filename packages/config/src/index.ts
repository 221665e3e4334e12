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
  impersonationHeaders,
} from './credential-provider.js';
export {
  CredentialError,
  type CredentialErrorCode,
  KubeconfigError,
  type KubeconfigErrorCode,
} from './errors.js';
export {
  type ExecCredentialResult,
  ExecCredentialSource,
  type ExecCredentialSourceOptions,
  type ExecRunListener,
} from './exec-credential.js';
export {
  DEFAULT_BURST,
  DEFAULT_QPS,
  defaultUserAgent,
  flagValue,
  getConfig,
  getConfigOrDie,
  inClusterConfig,
  KUBELOOP_VERSION,
  type LoadRestConfigOptions,
  loadRestConfig,
  loadRestConfigFromFiles,
  restConfigFromKubeconfig,
  SERVICE_ACCOUNT_DIR,
} from './load-rest-config.js';
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
