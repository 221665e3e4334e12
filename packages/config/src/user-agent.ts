import path from 'node:path';
import { DEFAULT_BURST, DEFAULT_QPS, KUBELOOP_VERSION } from './defaults.js';
import type { LoadRestConfigOptions } from './options.js';

/** The default user agent: `<app>/<version> (<os>/<arch>) kubeloop/<version>` (client-go's shape). */
export function defaultUserAgent(
  appName?: string,
  appVersion?: string,
  argv: readonly string[] = process.argv,
): string {
  const script = argv[1];
  const app = appName ?? (script ? path.basename(script).replace(/\.[cm]?[jt]s$/, '') : 'node');
  return `${app || 'node'}/${appVersion ?? 'v0.0.0'} (${process.platform}/${process.arch}) kubeloop/${KUBELOOP_VERSION}`;
}

/** The request tunables every loaded config carries: QPS, burst, timeout and user agent, defaults applied. */
export function tunables(options: LoadRestConfigOptions) {
  return {
    qps: options.qps ?? DEFAULT_QPS,
    burst: options.burst ?? DEFAULT_BURST,
    timeoutMs: options.timeoutMs ?? 0,
    userAgent: options.userAgent ?? defaultUserAgent(options.appName, options.appVersion, options.argv),
  };
}
