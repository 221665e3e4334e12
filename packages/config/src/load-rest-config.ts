import fs from 'node:fs';
import path from 'node:path';
import { KubeconfigError } from './errors.js';
import { homeDirOf } from './home-dir.js';
import { inClusterConfig, isInClusterPossible } from './in-cluster.js';
import { flagValue } from './internal/flags.js';
import { loadKubeconfigFiles, splitKubeconfigEnv } from './internal/kubeconfig-files.js';
import { restConfigFromKubeconfig } from './kubeconfig-rest-config.js';
import type { LoadRestConfigOptions } from './options.js';
import type { RestConfig } from './rest-config.js';

/**
 * Find and load the `RestConfig`, in controller-runtime's order (`pkg/client/config.GetConfig`):
 * 1. `options.kubeconfig`, else a `--kubeconfig` flag in argv — that one file only; missing is an error;
 * 2. when `KUBECONFIG` is unset, in-cluster (service account) if the pod env is present;
 * 3. the `KUBECONFIG` path list (de-duplicated, missing files skipped, merged: first definition wins);
 *    if all are missing, in-cluster when possible;
 * 4. `~/.kube/config`.
 * The context is `options.context`, else `--context`, else the merged `current-context`.
 * QPS/burst default to 20/30 (see the package README for how this differs from client-go and
 * current controller-runtime).
 * @throws {KubeconfigError} when nothing is found or the chosen config is invalid.
 */
export function loadRestConfig(options: LoadRestConfigOptions = {}): RestConfig {
  const env = options.env ?? process.env;
  const argv = options.argv ?? process.argv;
  const context = options.context ?? flagValue(argv, 'context');
  const opts = { ...options, ...(context ? { context } : {}) };
  const explicit = options.kubeconfig ?? flagValue(argv, 'kubeconfig');
  if (explicit) return restConfigFromKubeconfig(loadKubeconfigFiles([explicit], false), opts);

  // An empty KUBECONFIG counts as unset (Go's os.Getenv cannot tell them apart).
  const kubeconfigEnv = env.KUBECONFIG || undefined;
  if (kubeconfigEnv === undefined && isInClusterPossible(env)) {
    try {
      return inClusterConfig(options);
    } catch (e) {
      if (!(e instanceof KubeconfigError && e.code === 'NotInCluster')) throw e;
    }
  }
  if (kubeconfigEnv !== undefined) {
    const files = splitKubeconfigEnv(kubeconfigEnv);
    const merged = loadKubeconfigFiles(files, true);
    // clientcmd.IsConfigEmpty: a current-context alone makes the config non-empty (its missing context is the error)
    const empty =
      merged.clusters.size === 0 &&
      merged.users.size === 0 &&
      merged.contexts.size === 0 &&
      merged.currentContext === undefined;
    if (!empty) return restConfigFromKubeconfig(merged, opts);
    if (isInClusterPossible(env)) return inClusterConfig(options);
    throw new KubeconfigError(
      'NoConfiguration',
      `no configuration found in KUBECONFIG (${files.join(', ')})`,
    );
  }
  const home = homeDirOf(options);
  if (home) {
    const file = path.join(home, '.kube', 'config');
    if (fs.existsSync(file)) return restConfigFromKubeconfig(loadKubeconfigFiles([file], false), opts);
  }
  throw new KubeconfigError(
    'NoConfiguration',
    'no configuration has been provided: pass --kubeconfig, set KUBECONFIG, run in a cluster or create ~/.kube/config',
  );
}

/** Alias of {@link loadRestConfig}, named after controller-runtime's `config.GetConfig`. */
export const getConfig: (options?: LoadRestConfigOptions) => RestConfig = loadRestConfig;

/**
 * {@link loadRestConfig}, or print `error: <message>` to stderr and exit with status 1
 * (controller-runtime's `GetConfigOrDie`).
 */
export function getConfigOrDie(options: LoadRestConfigOptions = {}): RestConfig {
  try {
    return loadRestConfig(options);
  } catch (e) {
    process.stderr.write(`error: unable to get kubeconfig: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}

/** Load a kubeconfig file list (merged by client-go's rules) into a `RestConfig`, without the search order. */
export function loadRestConfigFromFiles(
  files: readonly string[],
  options: LoadRestConfigOptions = {},
): RestConfig {
  return restConfigFromKubeconfig(loadKubeconfigFiles(files, false), options);
}
