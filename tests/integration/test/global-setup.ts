import { Environment } from '@kubeloop/envtest';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of a kubeconfig for the API server every integration test talks to. */
    kubeconfigPath: string;
  }
}

/**
 * Starts ONE envtest API server for the run (with `USE_EXISTING_CLUSTER=true`, `Environment` uses the
 * current kubeconfig instead) and hands its kubeconfig path to the tests through `provide`/`inject`.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const env = new Environment();
  await env.start();
  project.provide('kubeconfigPath', env.kubeconfigPath);
  return async () => {
    await env.stop();
  };
}
