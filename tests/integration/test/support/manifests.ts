import type { V1Deployment } from '@kubeloop/client/models';

/** A minimal Deployment (one pause container) that the API server defaults (strategy, pull policy, …). */
export function deploymentManifest(namespace: string, name: string, replicas = 1): V1Deployment {
  return {
    metadata: { namespace, name, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
      },
    },
  };
}
