/**
 * @packageDocumentation
 * `@kubeloop/config` holds the {@link RestConfig} — what it takes to reach and trust one API server — and
 * the rules by which it is found: `--kubeconfig` flag, `KUBECONFIG`, in-cluster, `~/.kube/config`
 * (controller-runtime's `pkg/client/config`).
 */
export type {
  CredentialProvider,
  ExecConfig,
  ImpersonationConfig,
  RequestCredentials,
  RestConfig,
  TLSClientConfig,
} from './rest-config.js';
