// cache-read (in-process, no server): reads from an informer's store holding N pods (the 2.5 KiB shape, in 100
// namespaces, 50 apps): `list` by the namespace index (N/100 objects) and by a label index vs a full scan
// with a filter (what a read without an index costs), and `get` by key — @kubeloop/cache's Indexer, its
// CompactIndexer (objects as JSON bytes, 1000 hot parsed objects), and a bare Map.
// Knobs: READ_OBJECTS (default 100000).
import { knob, metricsOf, ratio } from '../lib/common.mjs';
import { smallPod } from '../lib/pods.mjs';

const N = knob('READ_OBJECTS', 100_000, 300);
const NS = 'team-007';
const APP = 'app-7';
const APP_LABEL = 'app.kubernetes.io/name';
const BY_NS = `list ${N / 100} of ${N} by namespace`;
const BY_LABEL = `list ${N / 50} of ${N} by label ${APP_LABEL}=${APP}`;
const GET = `get by key (1000 keys of ${N})`;

const built = new Map();
/** Builds the store once per process and kind (a task process runs one task; the smoke test runs all). */
async function store(kind) {
  if (built.has(kind)) return built.get(kind);
  const { Indexer, CompactIndexer, metaNamespaceIndexFunc, NAMESPACE_INDEX } = await import(
    '@kubeloop/cache'
  );
  const indexers = {
    [NAMESPACE_INDEX]: metaNamespaceIndexFunc,
    app: (o) => (o.metadata?.labels?.[APP_LABEL] ? [o.metadata.labels[APP_LABEL]] : []),
  };
  const s =
    kind === 'map'
      ? new Map()
      : kind === 'compact'
        ? new CompactIndexer({ indexers, maxCachedObjects: 1000 })
        : new Indexer({ indexers });
  for (let i = 0; i < N; i++) {
    // parsed from JSON like an informer's objects (own hidden classes, no shared literals)
    const pod = JSON.parse(JSON.stringify(smallPod(i)));
    if (kind === 'map') s.set(`${pod.metadata.namespace}/${pod.metadata.name}`, pod);
    else s.upsert(pod);
  }
  built.set(kind, s);
  return s;
}

const keys = Array.from({ length: 1000 }, (_, j) => {
  const p = smallPod((j * 97) % N);
  return `${p.metadata.namespace}/${p.metadata.name}`;
});

function expectCount(impl, got, want) {
  if (got !== want) throw new Error(`${impl}: got ${got} objects, want ${want}`);
}

function listTask(scenario, impl, kind, read, want) {
  let s;
  return {
    scenario,
    impl,
    beforeAll: async () => {
      s = await store(kind);
    },
    fn: () => expectCount(impl, read(s).length, want),
  };
}

function getTask(impl, kind) {
  let s;
  return {
    scenario: GET,
    impl,
    opsPerCall: 1000,
    beforeAll: async () => {
      s = await store(kind);
      if (kind === 'compact') for (const k of keys) s.get(k); // hot: the recently read 1000
    },
    fn: () => {
      let n = 0;
      for (let j = 0; j < keys.length; j++) if (s.get(keys[j])) n++;
      expectCount(impl, n, 1000);
    },
  };
}

export async function tasks() {
  const { parseLabelSelector, matchesLabelRequirements } = await import('@kubeloop/client/apiutil');
  const reqs = parseLabelSelector(`${APP_LABEL}=${APP}`);
  const nsCount = N / 100;
  const appCount = N / 50;
  return [
    listTask(
      BY_NS,
      'full-scan',
      'indexer',
      (s) => s.list().filter((o) => o.metadata.namespace === NS),
      nsCount,
    ),
    listTask(BY_NS, 'kubeloop-indexer', 'indexer', (s) => s.byIndex('namespace', NS), nsCount),
    listTask(BY_NS, 'kubeloop-compact-store', 'compact', (s) => s.byIndex('namespace', NS), nsCount),
    listTask(
      BY_LABEL,
      'full-scan',
      'indexer',
      (s) => s.list().filter((o) => matchesLabelRequirements(reqs, o.metadata.labels ?? {})),
      appCount,
    ),
    listTask(BY_LABEL, 'kubeloop-indexer', 'indexer', (s) => s.byIndex('app', APP), appCount),
    getTask('bare-map', 'map'),
    getTask('kubeloop-indexer', 'indexer'),
    getTask('kubeloop-compact-store', 'compact'),
  ];
}

export function summary(results) {
  const ns = (i) => metricsOf(results, BY_NS, i);
  const lb = (i) => metricsOf(results, BY_LABEL, i);
  const get = (i) => metricsOf(results, GET, i);
  return [
    {
      scenario: BY_NS,
      impl: 'kubeloop-indexer vs full-scan',
      ratio: ratio(ns('kubeloop-indexer')?.nsPerOp, ns('full-scan')?.nsPerOp),
      ratioOf: 'time per list ÷ full scan (target ≤ 0.02)',
      ratios: { compactStore: ratio(ns('kubeloop-compact-store')?.nsPerOp, ns('full-scan')?.nsPerOp) },
    },
    {
      scenario: BY_LABEL,
      impl: 'kubeloop-indexer vs full-scan',
      ratio: ratio(lb('kubeloop-indexer')?.nsPerOp, lb('full-scan')?.nsPerOp),
      ratioOf: 'time per list ÷ full scan with the selector',
    },
    {
      scenario: GET,
      impl: 'kubeloop vs bare-map',
      ratio: ratio(get('kubeloop-indexer')?.nsPerOp, get('bare-map')?.nsPerOp),
      ratioOf: 'time per get ÷ Map.get',
      ratios: { compactStoreHot: ratio(get('kubeloop-compact-store')?.nsPerOp, get('bare-map')?.nsPerOp) },
    },
  ];
}
