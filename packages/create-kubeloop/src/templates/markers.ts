/** The scaffold's insertion markers, shared by every template that leaves a place for later commands. */

/** Marker comments where later commands insert lines (kubebuilder's `+kubebuilder:scaffold:*`). */
export const MARK = {
  imports: 'kubeloop:scaffold:imports',
  setup: 'kubeloop:scaffold:setup',
  controllers: 'kubeloop:scaffold:controllers',
  rbac: 'kubeloop:scaffold:rbac',
  api: 'kubeloop:scaffold:api',
  resources: 'kubeloop:scaffold:resources',
  webhooks: 'kubeloop:scaffold:webhooks',
  serve: 'kubeloop:scaffold:serve',
  patches: 'kubeloop:scaffold:patches',
  crds: 'kubeloop:scaffold:crds',
} as const;
