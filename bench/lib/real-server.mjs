// The bench against a real kube-apiserver (`--server real --kubeconfig …`, bench/README.md "Real server"):
// the parent fills one namespace with N realistic pods through the API — created by "kube-controller-manager"
// and their status written by "kubelet", so each carries the two managedFields entries a real pod has — and
// every contender caches that namespace. The pods are labelled by shard of 10,000 so that a later, smaller or
// larger size only creates or deletes what differs; `cleanRealPods` deletes them all (the server is shared:
// never leave them there after a measuring session).
import { readFileSync } from 'node:fs';
import { realisticPod } from './pods.mjs';

export const SHARD_LABEL = 'bench.kubeloop.dev/shard';
const SHARD = 10_000;
/**
 * BENCH_REAL_STATUS=1: also write each pod's Running status as the kubelet would (a second write per pod;
 * the pod then serves ~8.8 KB instead of ~7.3 KB). Off by default: on the shared 2-core box the server takes
 * ~30 writes/s, and a create is all a cache's cost needs.
 */
const WITH_STATUS = process.env.BENCH_REAL_STATUS === '1';
/** Requests in flight while filling or patching (one pooled keep-alive client). */
const IN_FLIGHT = Number(process.env.BENCH_REAL_IN_FLIGHT) || 16;

/** The namespace the bench uses on a real server (BENCH_REAL_NAMESPACE, default `bench-real`). */
export const realNamespace = () => process.env.BENCH_REAL_NAMESPACE || 'bench-real';

/** Whether this run is against a real server (`run.mjs --server real` sets BENCH_SERVER). */
export const onRealServer = () => process.env.BENCH_SERVER === 'real';

/** The kubeconfig of the real server (`run.mjs --kubeconfig`, else KUBECONFIG). */
export function realKubeconfig() {
  const kc = process.env.BENCH_KUBECONFIG || process.env.KUBECONFIG;
  if (!kc) throw new Error('bench --server real needs --kubeconfig <file> (or KUBECONFIG)');
  return kc;
}

/** Server URL, CA and token of a kubeconfig, through @kubeloop/config (any kubeconfig it can load). */
export async function targetOf(kubeconfig) {
  const { loadRestConfig } = await import('@kubeloop/config');
  const c = loadRestConfig({ kubeconfig, env: {}, argv: [] });
  let ca = c.tlsClientConfig.caData;
  if (!ca && c.tlsClientConfig.caFile) ca = readFileSync(c.tlsClientConfig.caFile, 'utf8');
  let token = c.bearerToken;
  if (!token && c.bearerTokenFile) token = readFileSync(c.bearerTokenFile, 'utf8').trim();
  return { url: c.host.replace(/\/$/, ''), ca, token, insecure: c.tlsClientConfig.insecure === true };
}

/** A small API helper for the parent (filling, counting, patching, deleting). */
async function api(kubeconfig) {
  const { Agent, request } = await import('undici');
  const { url, ca, token, insecure } = await targetOf(kubeconfig);
  const dispatcher = new Agent({
    connections: IN_FLIGHT,
    connect: insecure ? { rejectUnauthorized: false } : { ca },
  });
  const auth = token ? { authorization: `Bearer ${token}` } : {};
  async function call(method, path, body, contentType = 'application/json') {
    const res = await request(`${url}${path}`, {
      dispatcher,
      method,
      headers: { ...auth, accept: 'application/json', ...(body ? { 'content-type': contentType } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
      headersTimeout: 300_000,
      bodyTimeout: 300_000,
    });
    const text = await res.body.text();
    return { status: res.statusCode, text };
  }
  return { call, close: () => dispatcher.close() };
}

/**
 * `call()` again (up to 8 times, 1 s apart) while the server answers 429/500/503/504 or drops the connection:
 * a loaded shared server times some creates out (504 after 60 s) and one of them must not end a fill of
 * 50,000 pods. A create that timed out may have been stored: its retry's 409 counts as done.
 */
async function retried(call) {
  for (let attempt = 1; ; attempt++) {
    try {
      const r = await call();
      if (![429, 500, 503, 504].includes(r.status) || attempt >= 8) return r;
    } catch (err) {
      if (attempt >= 8 || !String(err?.code ?? '').startsWith('UND_ERR')) throw err;
    }
    await new Promise((res) => setTimeout(res, 1000));
  }
}

/** Runs `fn(i)` for i in [0, n) with at most `limit` at once. */
async function pool(n, limit, fn) {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, n) }, worker));
}

/**
 * The pod a bench run creates for index i: the realistic shape, in `namespace`, without server-set fields.
 * It keeps its `managedFields`: a create that carries them is taken as given (the server recomputes the
 * creating manager's entry and keeps the kubelet's status entry), which gives each pod both entries in one
 * write instead of two.
 */
export function benchPod(i, namespace) {
  const p = realisticPod(i);
  const { resourceVersion, uid, creationTimestamp, ...metadata } = p.metadata;
  void uid;
  void creationTimestamp;
  metadata.namespace = namespace;
  metadata.labels = { ...metadata.labels, [SHARD_LABEL]: String(Math.floor(i / SHARD)) };
  return { pod: { apiVersion: 'v1', kind: 'Pod', metadata, spec: p.spec }, status: p.status };
}

/**
 * Pods in `namespace`: a list of one item and its `remainingItemCount` (which the server gives only for a list
 * without selectors — the namespace is the bench's own, so every pod in it is a bench pod).
 */
async function countPods(a, namespace) {
  const r = await a.call('GET', `/api/v1/namespaces/${namespace}/pods?limit=1`);
  if (r.status !== 200) throw new Error(`count pods: HTTP ${r.status} ${r.text.slice(0, 300)}`);
  const l = JSON.parse(r.text);
  return l.items.length + (l.metadata.remainingItemCount ?? 0);
}

/** Whether pod i of the bench exists in `namespace`. */
async function podExists(a, namespace, i) {
  const r = await a.call(
    'GET',
    `/api/v1/namespaces/${namespace}/pods/${benchPod(i, namespace).pod.metadata.name}`,
  );
  return r.status === 200;
}

/**
 * Deletes the pods of `namespace` matching `selector` (every pod when it is empty) in one deletecollection,
 * asked again while the count still moves (a large collection may outlive the request's timeout; the server
 * goes on deleting). Grace 0: the pods name a node, and without a kubelet a graceful delete never completes.
 */
async function deletePods(a, namespace, selector, wantLeft) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const q = `gracePeriodSeconds=0${selector ? `&labelSelector=${encodeURIComponent(selector)}` : ''}`;
    try {
      const r = await a.call('DELETE', `/api/v1/namespaces/${namespace}/pods?${q}`);
      if (r.status !== 200 && r.status !== 504 && r.status !== 500)
        throw new Error(`delete pods: HTTP ${r.status} ${r.text.slice(0, 300)}`);
    } catch (err) {
      // the server closes a request that outlives its timeout; it goes on deleting, and we ask again
      if (err?.code !== 'UND_ERR_SOCKET') throw err;
    }
    if ((await countPods(a, namespace)) <= wantLeft) return;
  }
  throw new Error(`delete pods in ${namespace}: more than ${wantLeft} left after 20 attempts`);
}

/**
 * Makes `namespace` hold exactly the bench pods 0..n-1 (creating the namespace if needed): shards beyond n
 * are deleted, missing pods created. Returns the count created and the mean size of a pod as the server
 * serves it (JSON bytes, from a page of 100).
 */
export async function ensureRealPods(kubeconfig, namespace, n, log = (s) => process.stderr.write(s)) {
  const a = await api(kubeconfig);
  try {
    const ns = await a.call('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    });
    if (ns.status !== 201 && ns.status !== 409)
      throw new Error(`create namespace ${namespace}: HTTP ${ns.status} ${ns.text.slice(0, 300)}`);
    const shards = Math.ceil(n / SHARD);
    let total = await countPods(a, namespace);
    if (total > n) {
      const keep = [...Array(shards).keys()].join(',');
      log(`real server: ${total} pods in ${namespace}, deleting those of shards ≥ ${shards}\n`);
      await deletePods(a, namespace, `${SHARD_LABEL} notin (${keep})`, n);
      total = await countPods(a, namespace);
      if (total > n) {
        await deletePods(a, namespace, `${SHARD_LABEL}=${shards - 1}`, (shards - 1) * SHARD);
        total = await countPods(a, namespace);
      }
    }
    let created = 0;
    const t0 = performance.now();
    if (total < n) {
      // the usual case is a prefix 0..total-1 left by a smaller size: create from there; otherwise all, taking
      // "already exists" as done
      // a fill that stopped half-way (created in index order, IN_FLIGHT at once) leaves a prefix with gaps
      // only in its last IN_FLIGHT indices: start that far back (their 409s count as done) rather than at 0
      const prefix =
        (total === 0 || (await podExists(a, namespace, total - 1))) &&
        !(await podExists(a, namespace, total));
      const from = prefix ? total : Math.max(0, total - 4 * IN_FLIGHT);
      log(`real server: ${total} pods in ${namespace}, creating ${from}..${n - 1}\n`);
      await pool(n - from, IN_FLIGHT, async (k) => {
        const i = from + k;
        const { pod, status } = benchPod(i, namespace);
        const c = await retried(() =>
          a.call('POST', `/api/v1/namespaces/${namespace}/pods?fieldManager=kube-controller-manager`, pod),
        );
        if (c.status === 409) return;
        if (c.status !== 201) throw new Error(`create pod ${i}: HTTP ${c.status} ${c.text.slice(0, 300)}`);
        created++;
        if (created % 5000 === 0) log(`real server: ${created} pods created\n`);
        if (!WITH_STATUS) return;
        const st = await a.call(
          'PATCH',
          `/api/v1/namespaces/${namespace}/pods/${pod.metadata.name}/status?fieldManager=kubelet`,
          { status },
          'application/merge-patch+json',
        );
        if (st.status !== 200)
          throw new Error(`status of pod ${i}: HTTP ${st.status} ${st.text.slice(0, 300)}`);
      });
    }
    total = await countPods(a, namespace);
    if (total !== n) throw new Error(`real server: ${namespace} holds ${total} pods, want ${n}`);
    const page = await a.call('GET', `/api/v1/namespaces/${namespace}/pods?limit=100`);
    const items = JSON.parse(page.text).items;
    const podBytes = Math.round(items.reduce((s, p) => s + JSON.stringify(p).length, 0) / items.length);
    if (created > 0)
      log(
        `real server: created ${created} pods in ${namespace} in ${Math.round((performance.now() - t0) / 1000)} s\n`,
      );
    return { created, podBytes };
  } finally {
    await a.close();
  }
}

/** Deletes every bench pod of `namespace` (the namespace itself stays: this server has no namespace controller). */
export async function cleanRealPods(kubeconfig, namespace, log = (s) => process.stderr.write(s)) {
  const a = await api(kubeconfig);
  try {
    const n = await countPods(a, namespace);
    if (n === 0) return 0;
    log(`real server: deleting ${n} bench pods in ${namespace}\n`);
    await deletePods(a, namespace, '', 0);
    return n;
  } finally {
    await a.close();
  }
}

/**
 * Patches pods 0..events-1 (mod n) of `namespace` once each, `IN_FLIGHT` at a time — each a merge patch of one
 * annotation, which the server turns into one MODIFIED event — and returns the rate the server took them at.
 */
export async function patchRealPods(kubeconfig, namespace, n, events, tag) {
  const a = await api(kubeconfig);
  try {
    const t0 = performance.now();
    await pool(events, IN_FLIGHT, async (k) => {
      const { pod } = benchPod(k % n, namespace);
      const r = await retried(() =>
        a.call(
          'PATCH',
          `/api/v1/namespaces/${namespace}/pods/${pod.metadata.name}?fieldManager=bench-patcher`,
          { metadata: { annotations: { 'bench.kubeloop.dev/seq': `${tag}-${k}` } } },
          'application/merge-patch+json',
        ),
      );
      if (r.status !== 200) throw new Error(`patch pod ${k}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
    });
    const s = (performance.now() - t0) / 1000;
    return { seconds: s, perSecond: events / s };
  } finally {
    await a.close();
  }
}
