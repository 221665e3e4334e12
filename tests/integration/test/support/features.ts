// Features a real API server may or may not serve, detected at run time against the run's server: a test that
// needs one asks first and, when the server lacks it, skips saying what the server answered (never assumes).
import { type ApiClient, ConfigMap, StatusError } from '@kubeloop/client';

/** The answer of a feature probe. */
export interface FeatureProbe {
  /** Whether the server serves the feature. */
  readonly served: boolean;
  /** What the server did, for the skip message. */
  readonly why: string;
}

/** How long the probe's watch may stay open on the server, in seconds. */
const PROBE_SECONDS = 10;

/**
 * Whether the server serves WatchList (KEP-3157, streaming initial sync): a watch of ConfigMaps in `namespace` with
 * `sendInitialEvents=true`, `resourceVersionMatch=NotOlderThan` and bookmarks is served when the server answers 200
 * and sends the BOOKMARK annotated `k8s.io/initial-events-end: "true"`. Not served: an HTTP error (kube-apiserver
 * 1.32 with the WatchList gate on etcd 3.4 answers 500; a server with the gate off and without the field answers
 * 400 or 422), an ERROR event, or the watch ending without that bookmark within {@link PROBE_SECONDS}.
 * @throws the transport error of a server that cannot be reached (that is a failure, not a missing feature).
 */
export async function probeWatchList(api: ApiClient, namespace: string): Promise<FeatureProbe> {
  const ac = new AbortController();
  try {
    const events = api.watch(ConfigMap, {
      namespace,
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
      allowWatchBookmarks: true,
      timeoutSeconds: PROBE_SECONDS,
      signal: ac.signal,
    });
    for await (const ev of events) {
      if (ev.type === 'ERROR')
        return { served: false, why: `the watch sent ERROR ${ev.object.code}: ${ev.object.message}` };
      const annotations = (ev.object.metadata as { annotations?: Record<string, string> } | undefined)
        ?.annotations;
      if (ev.type === 'BOOKMARK' && annotations?.['k8s.io/initial-events-end'] === 'true')
        return { served: true, why: 'the initial-events-end bookmark arrived' };
    }
    return {
      served: false,
      why: `the watch ended without the initial-events-end bookmark within ${PROBE_SECONDS} s`,
    };
  } catch (err) {
    if (err instanceof StatusError) return { served: false, why: `HTTP ${err.httpStatus}: ${err.message}` };
    throw err;
  } finally {
    ac.abort();
  }
}
