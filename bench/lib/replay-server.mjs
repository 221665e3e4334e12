// The replay server (bench/README.md, "Replay server"): a small HTTPS server that answers pod lists and pod
// watches from bytes encoded before the clock starts, as fast as the socket takes them, so what a scenario
// measures is the client's cost and not the server's. It serves only what the clients under test ask for:
// discovery of core/v1 pods, `GET /api/v1/pods` (paged with `limit`/`continue`, or whole), and
// `GET /api/v1/pods?watch=true` (optionally WatchList's `sendInitialEvents=true`, then the configured
// MODIFIED events, at full speed or paced). Every request is logged with its arrival time (ms since the
// epoch, sub-ms precision, comparable across processes on this machine) for the limiter scenario.
//
// Control endpoints (same server, no auth): `GET /_bench/log` → the request log as JSON,
// `POST /_bench/log/reset`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { POD_SHAPES } from './pods.mjs';

/** Milliseconds since the epoch with sub-ms precision; comparable between processes of one machine. */
export const nowMs = () => performance.timeOrigin + performance.now();

/** @type {{ cert: string, key: string } | undefined} */
let certificate;

/** A self-signed serving certificate for 127.0.0.1 (openssl, EC P-256), PEM; made once per process. */
function selfSigned() {
  certificate ??= newSelfSigned();
  return certificate;
}

function newSelfSigned() {
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-replay-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '2',
        '-subj',
        '/CN=kubeloop-replay',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    return {
      cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
      key: readFileSync(join(dir, 'key.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const RV_MARK = '"__RV__"';
const TS_MARK = '"__TS__"';

/**
 * @typedef {object} ReplayOptions
 * @property {number} objects            pods in the list
 * @property {'realistic' | 'small'} [shape='realistic']
 * @property {number} [namespaces=100]
 * @property {number} [watchEvents=0]    MODIFIED events each watch request gets after its initial events
 * @property {number} [watchRate=0]      events per second (0: as fast as the socket takes them)
 * @property {number} [watchDelayMs=0]   wait this long after the watch request before the first event
 * @property {boolean} [stampEvents=false] put the send time (ms since epoch) into annotation `bench/sent-at`
 */

/**
 * Starts a replay server on 127.0.0.1 and writes a kubeconfig for it.
 * @param {ReplayOptions} options
 * @returns {Promise<{ url: string, kubeconfigPath: string, listBytes: number, podBytes: number,
 *   close: () => Promise<void>, log: Array<{ t: number, method: string, path: string }> }>}
 */
export async function startReplayServer(options) {
  const objects = options.objects;
  const make = POD_SHAPES[options.shape ?? 'realistic'];
  const namespaces = options.namespaces ?? 100;
  const watchEvents = options.watchEvents ?? 0;
  const watchRate = options.watchRate ?? 0;
  const stamp = options.stampEvents ?? false;

  /** @type {Buffer[]} */
  const pods = new Array(objects);
  let podBytes = 0;
  for (let i = 0; i < objects; i++) {
    pods[i] = Buffer.from(JSON.stringify(make(i, { namespaces })));
    podBytes += pods[i].length;
  }
  // Watch events: per pod (the first min(objects, watchEvents)) a template split at the resourceVersion and
  // the send-time annotation, so an event is three or five slices and a number, never a JSON.stringify.
  const templated = Math.min(objects, watchEvents);
  /** @type {Buffer[][]} */
  const templates = new Array(templated);
  for (let i = 0; i < templated; i++) {
    const pod = make(i, { namespaces });
    pod.metadata.resourceVersion = '__RV__';
    if (stamp) pod.metadata.annotations = { ...pod.metadata.annotations, 'bench/sent-at': '__TS__' };
    const text = `{"type":"MODIFIED","object":${JSON.stringify(pod)}}\n`;
    const [a, rest] = text.split(RV_MARK);
    const parts = stamp ? [a, ...rest.split(TS_MARK)] : [a, rest];
    templates[i] = parts.map((p) => Buffer.from(p));
  }
  const listRV = String(1000 + objects);
  const log = [];

  const { cert, key } = selfSigned();
  const server = createServer({ cert, key }, (req, res) => {
    const t = nowMs();
    const url = new URL(req.url ?? '/', 'https://replay');
    if (url.pathname.startsWith('/_bench/')) return control(url, req, res);
    log.push({ t, method: req.method ?? 'GET', path: url.pathname + url.search });
    if (req.method !== 'GET') return status(res, 405, 'MethodNotAllowed', 'read-only replay server');
    switch (url.pathname) {
      case '/api':
        return json(res, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
      case '/apis':
        return json(res, { kind: 'APIGroupList', apiVersion: 'v1', groups: [] });
      case '/api/v1':
        return json(res, {
          kind: 'APIResourceList',
          groupVersion: 'v1',
          resources: [
            {
              name: 'pods',
              singularName: 'pod',
              namespaced: true,
              kind: 'Pod',
              verbs: ['get', 'list', 'watch'],
            },
          ],
        });
      case '/api/v1/pods':
        return url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1'
          ? watch(url, req, res)
          : list(url, res);
      default:
        return status(res, 404, 'NotFound', `no ${url.pathname} here`);
    }
  });

  function control(url, req, res) {
    if (url.pathname === '/_bench/log' && req.method === 'GET') return json(res, log);
    if (url.pathname === '/_bench/log/reset' && req.method === 'POST') {
      log.length = 0;
      return json(res, { ok: true });
    }
    return status(res, 404, 'NotFound', 'unknown control path');
  }

  /** Writes `chunks` (an iterator of Buffers) with backpressure; resolves when all are written. */
  async function pump(res, chunks) {
    for (const c of chunks) {
      if (res.destroyed) return;
      if (!res.write(c)) await drained(res);
    }
  }

  function* listBody(from, to, cont) {
    const meta = {
      resourceVersion: listRV,
      ...(cont ? { continue: cont, remainingItemCount: objects - to } : {}),
    };
    yield Buffer.from(`{"kind":"PodList","apiVersion":"v1","metadata":${JSON.stringify(meta)},"items":[`);
    // items in batches of ~64 KiB so a big page is few writes
    let batch = [];
    let size = 0;
    for (let i = from; i < to; i++) {
      if (i > from) batch.push(COMMA);
      batch.push(pods[i]);
      size += pods[i].length;
      if (size >= 65536) {
        yield Buffer.concat(batch);
        batch = [];
        size = 0;
      }
    }
    if (batch.length) yield Buffer.concat(batch);
    yield Buffer.from(']}');
  }

  function list(url, res) {
    const limit = Number(url.searchParams.get('limit') ?? 0);
    const from = Number(url.searchParams.get('continue') ?? 0) || 0;
    const to = limit > 0 ? Math.min(objects, from + limit) : objects;
    const cont = to < objects ? String(to) : '';
    res.writeHead(200, { 'content-type': 'application/json' });
    pump(res, listBody(from, to, cont)).then(
      () => res.end(),
      () => res.destroy(),
    );
  }

  function* initialEvents() {
    for (let i = 0; i < objects; i++) yield Buffer.concat([ADDED_HEAD, pods[i], EVENT_TAIL]);
    yield Buffer.from(
      `${JSON.stringify({
        type: 'BOOKMARK',
        object: {
          kind: 'Pod',
          apiVersion: 'v1',
          metadata: { resourceVersion: listRV, annotations: { 'k8s.io/initial-events-end': 'true' } },
        },
      })}\n`,
    );
  }

  function* modifiedEvents() {
    for (let j = 0; j < watchEvents; j++) {
      const parts = templates[j % templated];
      const rv = Buffer.from(`"${1000 + objects + 1 + j}"`);
      if (!stamp) yield Buffer.concat([parts[0], rv, parts[1]]);
      else yield Buffer.concat([parts[0], rv, parts[1], Buffer.from(`"${nowMs().toFixed(3)}"`), parts[2]]);
    }
  }

  async function* paced() {
    const start = nowMs();
    const it = modifiedEvents();
    for (let j = 0; ; j++) {
      const wait = start + (j * 1000) / watchRate - nowMs();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      const next = it.next(); // encoded (and stamped) now, at its send time
      if (next.done) return;
      yield next.value;
    }
  }

  function watch(url, req, res) {
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    const initial = url.searchParams.get('sendInitialEvents') === 'true';
    const timeout = Number(url.searchParams.get('timeoutSeconds') ?? 0);
    let timer;
    if (timeout > 0) timer = setTimeout(() => res.end(), timeout * 1000);
    req.on('close', () => clearTimeout(timer));
    (async () => {
      if (options.watchDelayMs) await new Promise((r) => setTimeout(r, options.watchDelayMs));
      if (initial) await pump(res, initialEvents());
      if (watchEvents > 0 && templated > 0) {
        if (watchRate > 0) {
          for await (const ev of paced()) {
            if (res.destroyed) return;
            if (!res.write(ev)) await drained(res);
          }
        } else await pump(res, modifiedEvents());
      }
      // then stay open, like a quiet watch, until the client goes or the timeout ends it
    })().catch(() => res.destroy());
  }

  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const addr = server.address();
  if (!addr || typeof addr === 'string') throw new Error('replay server: no port');
  const url = `https://127.0.0.1:${addr.port}`;
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-replay-kc-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  // JSON is YAML: every kubeconfig loader reads it
  writeFileSync(
    kubeconfigPath,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'replay',
          cluster: { server: url, 'certificate-authority-data': Buffer.from(cert).toString('base64') },
        },
      ],
      users: [{ name: 'replay', user: { token: 'replay-bench' } }],
      contexts: [{ name: 'replay', context: { cluster: 'replay', user: 'replay' } }],
      'current-context': 'replay',
    }),
    { mode: 0o600 },
  );
  return {
    url,
    kubeconfigPath,
    podBytes,
    listBytes: podBytes + objects,
    log,
    close: async () => {
      server.closeAllConnections?.();
      await new Promise((resolve) => server.close(() => resolve(undefined)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const COMMA = Buffer.from(',');
const ADDED_HEAD = Buffer.from('{"type":"ADDED","object":');
const EVENT_TAIL = Buffer.from('}\n');

/** Resolves on the response's next 'drain' (or 'close'), leaving no listener behind. */
function drained(res) {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve(undefined);
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

function json(res, body) {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function status(res, code, reason, message) {
  const text = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code, message });
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
