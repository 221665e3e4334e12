/** kubeloop's own version, in the `User-Agent`. */
export const KUBELOOP_VERSION = '0.1.0';
/** Default client-side rate limit (requests/s): kube-controller-manager's, and controller-runtime's before v0.21. */
export const DEFAULT_QPS = 20;
/** Default token-bucket size. */
export const DEFAULT_BURST = 30;
/** Where a pod's service account credentials are mounted. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
