/** The options of the in-process API server (`startApiServer`). */

import type { Clock } from '@kubeloop/core';
import type { WebhookAdmissionOptions } from './admission/webhook-admission.js';
import type { TokenOptions } from './auth.js';

/** Options of {@link startApiServer}. */
export interface ApiServerOptions {
  /**
   * Admission webhooks: envtest calls the webhooks of `MutatingWebhookConfiguration` /
   * `ValidatingWebhookConfiguration` objects as kube-apiserver does; `resolveService` maps a `service` client
   * config to a loopback URL.
   */
  readonly webhooks?: WebhookAdmissionOptions;
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  readonly port?: number;
  /** Host to bind; loopback only (default `127.0.0.1`). */
  readonly host?: string;
  /** Extra bearer tokens accepted from the start (the admin token is always generated). */
  readonly tokens?: ReadonlyArray<string | ({ token: string } & TokenOptions)>;
  /** Serving certificate options. `sans` default `['127.0.0.1', 'localhost']`; exactly these SANs are used. */
  readonly tls?: { readonly sans?: readonly string[] };
  /** Where to write the kubeconfig (mode 0600). Default: a new temp directory's `kubeconfig`. */
  readonly kubeconfigPath?: string;
  /** Watch events kept per resource for replay (default 10000). */
  readonly watchHistoryLimit?: number;
  /**
   * How often a watch with allowWatchBookmarks is due for a BOOKMARK (ms, default 60000, the watch cache's
   * bookmark frequency); it also is 2 s before its deadline. A due watch gets one only when its resource's
   * watch cache has moved past the RV the watch started from (see the README). 0: none but the
   * `k8s.io/initial-events-end` one.
   */
  readonly bookmarkIntervalMs?: number;
  /** Stream length of watches without timeoutSeconds (ms, default 1800 s × rand[1,2) as upstream). */
  readonly defaultWatchTimeoutMs?: number;
  /**
   * Unread live-event bytes a watcher may leave queued before the server closes its watch, as kube-apiserver
   * closes watchers that do not keep up (default 8 MiB).
   */
  readonly watchBufferBytes?: number;
  /**
   * Serve aggregated discovery (KEP-3352) on /api and /apis (default true). `false` answers every request
   * there with the legacy documents, as servers before 1.26 do, so clients' fallback paths can be tested;
   * `ApiServer.setAggregatedDiscovery` switches it at runtime.
   */
  readonly aggregatedDiscovery?: boolean;
  /**
   * Run a garbage collector for `ownerReferences` (default false, as upstream envtest runs none): deleting an
   * owner deletes its dependents (Background, the default), deletes them first while the owner waits behind the
   * `foregroundDeletion` finalizer for those with `blockOwnerDeletion` (Foreground), or only removes their
   * reference to it (Orphan).
   */
  readonly garbageCollection?: boolean;
  /**
   * The clock of watch deadlines, bookmark times and etcd's 10-minute progress notifications (default: real
   * time): `@kubeloop/core`'s `Clock`, so a `FakeClock` from `@kubeloop/core/testing` drives them in a test.
   */
  readonly clock?: Clock;
  /** `gitVersion` reported by /version (default `v1.32.4-kubeloop`). */
  readonly gitVersion?: string;
  /**
   * The authorizer (kube-apiserver `--authorization-mode`): `'AlwaysAllow'` lets every authenticated request
   * through and answers every SubjectAccessReview with allowed; `'RBAC'` authorizes resource requests and
   * SubjectAccessReviews against the stored Roles, ClusterRoles and their bindings (`system:masters` is always
   * allowed; non-resource paths such as discovery stay open to every authenticated user).
   * @defaultValue `'AlwaysAllow'`
   */
  readonly authorization?: 'AlwaysAllow' | 'RBAC';
}
