// Macro benchmark: a pod informer from @kubeloop/cache against @kubernetes/client-node's informer, both
// talking HTTPS to ONE in-process envtest API server that lives in the runner's parent process (setup()).
// Every task runs in its own child process (lib/child.mjs), so each implementation loads only its own stack
// (imports are dynamic, inside the task) and its heap is measured alone.
//
// Knobs (environment): OBJECTS (pods in the server, default 5000), UPDATES (label changes in the watch
// scenario, default 2000), NAMESPACES (default 10). See bench/README.md ("informer").
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';

const OBJECTS = positiveInt('OBJECTS', 5000);
const UPDATES = positiveInt('UPDATES', 2000);
const NAMESPACES = positiveInt('NAMESPACES', 10);

const KUBELOOP = 'kubeloop-shared-index-informer';
const CLIENT_NODE = '@kubernetes/client-node-informer';
const LIST_SYNC = `list+sync ${OBJECTS} pods`;
const WATCH = `watch ${UPDATES} updates`;

/** @param {string} name @param {number} dflt */
function positiveInt(name, dflt) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return n;
}

/** A pod about the size and shape a real cluster lists (~2.5 KiB of JSON). */
function podBody(i, namespace) {
  const name = `bench-pod-${String(i).padStart(6, '0')}`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels: { app: `app-${i % 50}`, tier: i % 2 ? 'web' : 'worker', 'bench/gen': '0' },
      annotations: { 'kubeloop.dev/bench': 'informer', 'prometheus.io/scrape': 'true' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `app-${i % 50}-7d9f8c6b5`,
          uid: `00000000-0000-4000-8000-${String(i % 50).padStart(12, '0')}`,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      nodeName: `node-${i % 20}`,
      serviceAccountName: 'default',
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      containers: [
        {
          name: 'app',
          image: 'registry.example.com/team/app:v1.2.3',
          args: ['--port=8080', '--log-level=info'],
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          env: [
            { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
            { name: 'MODE', value: 'production' },
          ],
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
          readinessProbe: { httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' }, periodSeconds: 10 },
          volumeMounts: [
            {
              name: 'kube-api-access',
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
              readOnly: true,
            },
          ],
          imagePullPolicy: 'IfNotPresent',
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
      ],
      volumes: [
        {
          name: 'kube-api-access',
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            ],
          },
        },
      ],
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
    },
  };
}

/**
 * Runs in the runner's parent process, once: starts the envtest server, fills it with OBJECTS pods (through
 * the in-process registry, so seeding costs no HTTP), and serves a tiny control endpoint the task processes
 * call to have UPDATES label changes applied at the server.
 */
export async function setup() {
  const { Environment } = await import('@kubeloop/envtest');
  const env = new Environment();
  await env.start();
  const server = env.server;
  if (!server || !env.kubeconfigPath)
    throw new Error('informer bench: envtest did not start an in-process server');
  const pods = server.resources.lookup('', 'v1', 'pods');
  const namespaces = server.resources.lookup('', 'v1', 'namespaces');
  if (!pods || !namespaces) throw new Error('informer bench: envtest serves no pods/namespaces');
  const opts = { fieldManager: 'bench' };
  const t0 = performance.now();
  const nsNames = Array.from({ length: NAMESPACES }, (_, i) => `bench-${i}`);
  for (const name of nsNames)
    server.registry.create(
      namespaces,
      undefined,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
      opts,
    );
  /** @type {{ ns: string, name: string }[]} */
  const keys = [];
  for (let i = 0; i < OBJECTS; i++) {
    const ns = /** @type {string} */ (nsNames[i % NAMESPACES]);
    const body = podBody(i, ns);
    server.registry.create(pods, ns, body, opts);
    keys.push({ ns, name: body.metadata.name });
  }
  process.stderr.write(
    `informer bench: ${OBJECTS} pods in ${NAMESPACES} namespaces seeded in ${Math.round(performance.now() - t0)} ms\n`,
  );

  let gen = 0;
  const control = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://control');
    if (req.method !== 'POST' || url.pathname !== '/update') {
      res.writeHead(404).end();
      return;
    }
    const count = Math.min(Number(url.searchParams.get('count') ?? UPDATES), keys.length);
    gen++;
    const value = String(gen);
    const started = performance.now();
    // Synchronous writes: each one fans its MODIFIED event out to the open watches at once, so the server
    // produces events faster than a client consumes them and the client's cost is what is measured.
    for (let i = 0; i < count; i++) {
      const k = /** @type {{ ns: string, name: string }} */ (keys[i]);
      server.registry.patch(
        pods,
        k.ns,
        k.name,
        (cur) => {
          /** @type {Record<string, string>} */ (cur.metadata.labels)['bench/gen'] = value;
          return cur;
        },
        opts,
      );
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ updated: count, gen, serverMs: performance.now() - started }));
  });
  await new Promise((resolve) => control.listen(0, '127.0.0.1', () => resolve(undefined)));
  const addr = control.address();
  if (!addr || typeof addr === 'string') throw new Error('informer bench: control server has no port');
  return {
    env: {
      BENCH_INFORMER_KUBECONFIG: env.kubeconfigPath,
      BENCH_INFORMER_CONTROL: `http://127.0.0.1:${addr.port}`,
      BENCH_INFORMER_OBJECTS: String(OBJECTS),
    },
    teardown: async () => {
      await new Promise((resolve) => control.close(() => resolve(undefined)));
      await env.stop();
    },
  };
}

const gc = typeof globalThis.gc === 'function' ? globalThis.gc : () => {};
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const round = (x, d = 1) => Number(x.toFixed(d));

function fixtureEnv() {
  const kubeconfig = process.env.BENCH_INFORMER_KUBECONFIG;
  const control = process.env.BENCH_INFORMER_CONTROL;
  const objects = Number(process.env.BENCH_INFORMER_OBJECTS);
  if (!kubeconfig || !control || !(objects > 0))
    throw new Error('informer bench: run through run.mjs (setup() provides the server)');
  return { kubeconfig, control, objects };
}

/** Resolves when `cond()` holds (checked on every `poke()`), rejects after `ms`. */
function waiter(cond, ms, what) {
  /** @type {() => void} */
  let poke = () => {};
  const done = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`informer bench: timed out waiting for ${what}`)), ms);
    poke = () => {
      if (cond()) {
        clearTimeout(timer);
        resolve(performance.now());
      }
    };
  });
  return { done, poke: () => poke() };
}

/**
 * The two implementations behind one shape: `start(onAdd, onUpdate)` starts an informer over all pods
 * and resolves when the implementation says it is synced; `count()` is the objects it caches; `stop()`.
 */
const impls = {
  [KUBELOOP]: async (kubeconfig) => {
    const { loadRestConfig } = await import('@kubeloop/config');
    const { newClient, Pod } = await import('@kubeloop/client');
    const { SharedIndexInformer, listWatchFor } = await import('@kubeloop/cache');
    // qps < 0: no client-side throttling, so the stack is measured and not the limiter (client-node has none).
    const config = { ...loadRestConfig({ kubeconfig, env: {}, argv: [] }), qps: -1 };
    const client = newClient(config);
    const ac = new AbortController();
    /** @type {import('@kubeloop/cache').SharedIndexInformer | undefined} */
    let informer;
    let running;
    return {
      async start(onAdd, onUpdate) {
        informer = new SharedIndexInformer(listWatchFor(client, Pod));
        informer.addEventHandler({ onAdd: () => onAdd(), onUpdate: () => onUpdate() });
        running = informer.run(ac.signal);
        running.catch(() => {});
        if (!(await informer.waitForSync())) throw new Error('kubeloop informer did not sync');
      },
      count: () => informer?.getIndexer().list().length ?? 0,
      async stop() {
        ac.abort();
        await running;
        await client.close();
      },
    };
  },
  [CLIENT_NODE]: async (kubeconfig) => {
    const k8s = await import('@kubernetes/client-node');
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfig);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    /** @type {import('@kubernetes/client-node').Informer<import('@kubernetes/client-node').V1Pod> & import('@kubernetes/client-node').ObjectCache<import('@kubernetes/client-node').V1Pod> | undefined} */
    let informer;
    let stopping = false;
    return {
      async start(onAdd, onUpdate) {
        informer = k8s.makeInformer(kc, '/api/v1/pods', () => core.listPodForAllNamespaces());
        informer.on('add', () => onAdd());
        informer.on('update', () => onUpdate());
        informer.on('error', (err) => {
          if (!stopping) process.stderr.write(`client-node informer error: ${String(err)}\n`);
        });
        await informer.start(); // resolves after the list is cached and the watch request is open
      },
      count: () => informer?.list().length ?? 0,
      async stop() {
        stopping = true;
        await informer?.stop();
      },
    };
  },
};

/**
 * list+sync: from `start` until the informer's add handler has seen every pod (the same point for both:
 * the list is decoded and cached) and until the implementation reports synced; CPU time of this process over
 * the same span; heap retained after a GC, per cached object (heap after the sync minus heap before `start`,
 * both after a GC, with the client already constructed).
 */
function listSyncTask(impl) {
  return {
    scenario: LIST_SYNC,
    impl,
    measure: async () => {
      const { kubeconfig, objects } = fixtureEnv();
      const informer = await impls[impl](kubeconfig);
      let adds = 0;
      const allAdded = waiter(() => adds >= objects, 120_000, `${objects} adds`);
      gc();
      const heapBefore = process.memoryUsage().heapUsed;
      const cpu0 = cpuMs();
      const t0 = performance.now();
      await informer.start(
        () => {
          adds++;
          if (adds === objects) allAdded.poke();
        },
        () => {},
      );
      const tSynced = performance.now();
      const cpuSynced = cpuMs();
      const tAdded = await allAdded.done;
      if (informer.count() !== objects)
        throw new Error(`${impl}: cached ${informer.count()} of ${objects} pods`);
      gc();
      const heapAfter = process.memoryUsage().heapUsed;
      // and once the loop has been idle for a moment (a request's leftovers may still be referenced at sync)
      if (process.env.BENCH_SMOKE !== '1') await new Promise((resolve) => setTimeout(resolve, 500));
      gc();
      const heapSettled = process.memoryUsage().heapUsed;
      const rss = process.memoryUsage().rss;
      if (informer.count() !== objects)
        throw new Error(`${impl}: cached ${informer.count()} of ${objects} pods`);
      await informer.stop();
      const addedMs = tAdded - t0;
      return {
        opsPerSec: Math.round((objects / addedMs) * 1000),
        nsPerOp: round((addedMs * 1e6) / objects),
        objects,
        timeToAllAddedMs: round(addedMs),
        timeToSyncedMs: round(tSynced - t0),
        cpuToSyncedMs: round(cpuSynced - cpu0),
        cpuUsPerObject: round(((cpuSynced - cpu0) * 1000) / objects, 2),
        heapRetainedBytes: heapAfter - heapBefore,
        heapBytesPerObject: Math.round((heapAfter - heapBefore) / objects),
        heapSettledBytesPerObject: Math.round((heapSettled - heapBefore) / objects),
        rssBytes: rss,
      };
    },
  };
}

/**
 * watch: once synced, ask the server (control endpoint, in the parent) to change a label on UPDATES pods
 * and time until the update handler has seen all of them; wall time from the request and CPU time of this
 * process (decode + cache + dispatch; the server's writes run in the parent and are not in it).
 */
function watchTask(impl) {
  return {
    scenario: WATCH,
    impl,
    measure: async () => {
      const { kubeconfig, control, objects } = fixtureEnv();
      const informer = await impls[impl](kubeconfig);
      const updates = Math.min(UPDATES, objects);
      let seen = 0;
      let counting = false;
      const allSeen = waiter(() => seen >= updates, 120_000, `${updates} updates`);
      await informer.start(
        () => {},
        () => {
          if (!counting) return;
          seen++;
          if (seen === updates) allSeen.poke();
        },
      );
      counting = true;
      // Have the server apply every update while this process is blocked (a synchronous child request), so
      // all the MODIFIED events are already waiting in the socket and the server's buffers when the clock
      // starts: what is timed is this informer draining them (decode, cache, dispatch), not the server's writes.
      let serverMs;
      let smokeStart = 0;
      if (process.env.BENCH_SMOKE === '1') {
        smokeStart = performance.now();
        // the smoke test runs the control server in this very process: a blocking request would deadlock
        const r = await fetch(`${control}/update?count=${updates}`, { method: 'POST' });
        ({ serverMs } = /** @type {{ serverMs: number }} */ (await r.json()));
      } else {
        const out = spawnSync(
          process.execPath,
          [
            '-e',
            `fetch(${JSON.stringify(`${control}/update?count=${updates}`)}, { method: 'POST' })
            .then(async (r) => { if (!r.ok) throw new Error('control endpoint answered ' + r.status); process.stdout.write(await r.text()); })`,
          ],
          { encoding: 'utf8', timeout: 300_000 },
        );
        if (out.status !== 0) throw new Error(`control request failed: ${out.stderr}`);
        ({ serverMs } = /** @type {{ serverMs: number }} */ (JSON.parse(out.stdout)));
      }
      gc();
      const cpu0 = cpuMs();
      // (smoke: the events flowed while this process awaited the control request, so time from before it)
      const t0 = smokeStart || performance.now();
      allSeen.poke(); // in case none were due
      const tDone = await allSeen.done;
      const cpu = cpuMs() - cpu0;
      const wall = tDone - t0;
      await informer.stop();
      return {
        opsPerSec: Math.round((updates / wall) * 1000),
        nsPerOp: round((wall * 1e6) / updates),
        events: updates,
        wallMs: round(wall),
        serverWriteMs: round(serverMs),
        cpuMs: round(cpu),
        cpuUsPerEvent: round((cpu * 1000) / updates, 2),
      };
    },
  };
}

/** @returns {import('../lib/runner.mjs').BenchTask[]} */
export function tasks() {
  return [listSyncTask(KUBELOOP), listSyncTask(CLIENT_NODE), watchTask(KUBELOOP), watchTask(CLIENT_NODE)];
}

/**
 * One `ratio` line per scenario: kubeloop cost ÷ client-node cost (below 1 = kubeloop cheaper), each metric's
 * median over the runs. `ratio` is the client's CPU time (robust on a shared machine, and the server's share is
 * not in it); `ratios` adds wall times and heap per object.
 */
export function summary(results) {
  /** medians over the runs, metric by metric (run.mjs adds them for macro tasks) */
  const by = (scenario, impl) => {
    const r = results.find((x) => x.scenario === scenario && x.impl === impl);
    return r ? (r.medians ?? r) : undefined;
  };
  const ratio = (a, b) => (a > 0 && b > 0 ? round(a / b, 3) : null);
  /** @type {Record<string, unknown>[]} */
  const out = [];
  const kl = by(LIST_SYNC, KUBELOOP);
  const cn = by(LIST_SYNC, CLIENT_NODE);
  if (kl && cn)
    out.push({
      scenario: LIST_SYNC,
      impl: `${KUBELOOP} vs ${CLIENT_NODE}`,
      ratio: ratio(kl.cpuToSyncedMs, cn.cpuToSyncedMs),
      ratioOf: 'median client CPU ms from start to synced, kubeloop ÷ client-node (< 1: kubeloop cheaper)',
      ratios: {
        timeToAllAddedMs: ratio(kl.timeToAllAddedMs, cn.timeToAllAddedMs),
        timeToSyncedMs: ratio(kl.timeToSyncedMs, cn.timeToSyncedMs),
        cpuToSyncedMs: ratio(kl.cpuToSyncedMs, cn.cpuToSyncedMs),
        heapBytesPerObject: ratio(kl.heapBytesPerObject, cn.heapBytesPerObject),
        heapSettledBytesPerObject: ratio(kl.heapSettledBytesPerObject, cn.heapSettledBytesPerObject),
      },
    });
  const kw = by(WATCH, KUBELOOP);
  const cw = by(WATCH, CLIENT_NODE);
  if (kw && cw)
    out.push({
      scenario: WATCH,
      impl: `${KUBELOOP} vs ${CLIENT_NODE}`,
      ratio: ratio(kw.cpuUsPerEvent, cw.cpuUsPerEvent),
      ratioOf: 'median client CPU µs per update event, kubeloop ÷ client-node (< 1: kubeloop cheaper)',
      ratios: {
        wallMs: ratio(kw.wallMs, cw.wallMs),
        cpuUsPerEvent: ratio(kw.cpuUsPerEvent, cw.cpuUsPerEvent),
      },
    });
  return out;
}
