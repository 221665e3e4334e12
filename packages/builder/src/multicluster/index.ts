/**
 * Multi-cluster controllers: the multi-cluster manager, providers that engage and disengage clusters at
 * runtime, and the builder of controllers that run in every engaged cluster (kubernetes-sigs/multicluster-runtime).
 */
export {
  MultiClusterController,
  MultiClusterControllerBuilder,
  type MultiClusterControllerOptions,
  type MultiClusterControllerStatus,
  newMultiClusterControllerManagedBy,
} from './builder.js';
export {
  type ClusterStatus,
  isMultiClusterManager,
  type MultiClusterManager,
  type MultiClusterManagerOptions,
  newMultiClusterManager,
} from './manager.js';
export {
  type Aware,
  ClusterEngageError,
  ClusterNotFoundError,
  isValidClusterName,
  type Provider,
} from './provider.js';
export {
  KUBECONFIG_SECRET_LABEL,
  KubeconfigDirProvider,
  type KubeconfigDirProviderOptions,
  KubeconfigSecretProvider,
  type KubeconfigSecretProviderOptions,
  type ProviderClusterOptions,
  StaticProvider,
} from './providers.js';
