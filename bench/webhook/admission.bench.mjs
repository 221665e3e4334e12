// webhook (loopback HTTPS): admission reviews per second and p99 latency of a trivial validator served by
// @kubeloop/webhook's WebhookServer (the typed validator behind AdmissionWebhook: decode, freeze, deadline,
// metrics on a registry, encode), against the limit: a bare node:https handler that does the same JSON parse,
// the same apiVersion/kind/uid checks and the same serialize, and nothing else. Same TLS key (P-256, made by
// openssl in setup), same keep-alive client (undici Pool, CALLERS concurrent callers) in the same process as
// the server, one fresh process per implementation. Knobs: WEBHOOK_SECONDS (5), WEBHOOK_CALLERS (16).
// A second scenario takes HTTP and TLS away: CPU per review of the library path alone (AdmissionWebhook.serve of
// a Buffer body with the same metrics the server records, then the serialize) against the bare parse/check/
// serialize, WEBHOOK_REVIEWS (30000) reviews in a row; CPU time, so it holds up better on a loaded box.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMs, knob, quantile, ratio, round, SMOKE } from '../lib/common.mjs';

const SECONDS = SMOKE ? 0.3 : knob('WEBHOOK_SECONDS', 5);
const CALLERS = knob('WEBHOOK_CALLERS', 16, 2);
const SCENARIO = `admission review, trivial validator, ${CALLERS} callers`;
const REVIEWS = knob('WEBHOOK_REVIEWS', 30_000, 200);
const LIBRARY = 'admission review in process (no HTTP/TLS), trivial validator';
const KUBELOOP_LIB = 'kubeloop AdmissionWebhook.serve + metrics';
const BARE_LIB = 'bare parse/check/serialize';
const KUBELOOP = 'kubeloop-webhook-server';
const BARE = 'bare-node-https (limit)';

export function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'bench-webhook-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      join(dir, 'tls.key'),
      '-out',
      join(dir, 'tls.crt'),
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { env: { BENCH_WEBHOOK_CERTS: dir }, teardown: () => rmSync(dir, { recursive: true, force: true }) };
}

/** An AdmissionReview as kube-apiserver sends it for a CREATE of a small custom resource. */
function review(i) {
  const object = {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: `w${i}`, namespace: 'default', uid: `0b9f-${i}`, labels: { app: 'bench' } },
    spec: { size: 3, color: 'blue', replicas: 2, image: 'registry.example.com/widget:1.2.3' },
  };
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `7c1a4a2e-0000-4000-8000-${String(i).padStart(12, '0')}`,
      kind: { group: 'example.com', version: 'v1', kind: 'Widget' },
      resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
      requestKind: { group: 'example.com', version: 'v1', kind: 'Widget' },
      requestResource: { group: 'example.com', version: 'v1', resource: 'widgets' },
      name: `w${i}`,
      namespace: 'default',
      operation: 'CREATE',
      userInfo: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
      object,
      oldObject: null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    },
  });
}

/** The limit: parse, the checks every webhook must make, serialize the answer. */
function bareServer(key, cert) {
  const server = https.createServer({ key, cert }, (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let r;
      try {
        r = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        r = undefined;
      }
      const uid = r?.request?.uid;
      if (
        r?.apiVersion !== 'admission.k8s.io/v1' ||
        r.kind !== 'AdmissionReview' ||
        typeof uid !== 'string'
      ) {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"kind":"Status"}');
        return;
      }
      const body = JSON.stringify({
        apiVersion: r.apiVersion,
        kind: 'AdmissionReview',
        response: { uid, allowed: true },
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ port: server.address().port, path: '/validate', close: () => server.close() }),
    ),
  );
}

async function kubeloopServer(dir) {
  const { Registry } = await import('prom-client');
  const { AdmissionWebhook, WebhookServer, validatingHandler } = await import('@kubeloop/webhook');
  const server = new WebhookServer({
    bindAddress: '127.0.0.1:0',
    certDir: dir,
    metricsRegistry: new Registry(),
  });
  const path = '/validate-example-com-v1-widget';
  server.register(
    path,
    new AdmissionWebhook(path.slice(1), validatingHandler({ validateCreate: () => undefined }), {}),
  );
  const stop = new AbortController();
  const running = server.start(stop.signal);
  await server.ready();
  return {
    port: server.port(),
    path,
    close: () => {
      stop.abort();
      return running;
    },
  };
}

async function drive(port, path, ca) {
  const { Pool } = await import('undici');
  const pool = new Pool(`https://127.0.0.1:${port}`, { connections: CALLERS, connect: { ca } });
  const bodies = Array.from({ length: 64 }, (_, i) => review(i));
  const call = async (i) => {
    const r = await pool.request({
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json' },
      body: bodies[i % bodies.length],
    });
    const text = await r.body.text();
    if (r.statusCode !== 200 || !text.includes('"allowed":true'))
      throw new Error(`answer ${r.statusCode}: ${text}`);
  };
  const loop = async (until, latencies) => {
    let i = 0;
    await Promise.all(
      Array.from({ length: CALLERS }, async () => {
        while (performance.now() < until) {
          const t = performance.now();
          await call(i++);
          latencies?.push(performance.now() - t);
        }
      }),
    );
  };
  await loop(performance.now() + Math.min(1000, SECONDS * 300)); // TLS handshakes and JIT, before the clock
  const latencies = [];
  const cpu0 = cpuMs();
  const t0 = performance.now();
  await loop(t0 + SECONDS * 1000, latencies);
  const wall = performance.now() - t0;
  const cpu = cpuMs() - cpu0;
  await pool.close();
  return {
    opsPerSec: Math.max(1, Math.round((latencies.length / wall) * 1000)),
    reviews: latencies.length,
    p50Ms: round(quantile(latencies, 0.5), 3),
    p99Ms: round(quantile(latencies, 0.99), 3),
    cpuUsPerReview: round((cpu * 1000) / latencies.length, 1),
    callers: CALLERS,
    seconds: SECONDS,
    smoke: SMOKE,
  };
}

const task = (impl, make) => ({
  scenario: SCENARIO,
  impl,
  measure: async () => {
    const dir = process.env.BENCH_WEBHOOK_CERTS;
    const key = readFileSync(join(dir, 'tls.key'));
    const cert = readFileSync(join(dir, 'tls.crt'));
    const server = await make(dir, key, cert);
    try {
      return await drive(server.port, server.path, cert);
    } finally {
      await server.close();
    }
  },
});

/** One review through the library path, as the server runs it (metrics included), minus HTTP and TLS. */
async function kubeloopLibrary() {
  const { Registry } = await import('prom-client');
  const { AdmissionWebhook, validatingHandler, webhookMetrics } = await import('@kubeloop/webhook');
  const webhook = new AdmissionWebhook('validate', validatingHandler({ validateCreate: () => undefined }));
  const m = webhookMetrics(new Registry());
  // label objects made once per path, as the server's routes hold them
  const labels = { webhook: '/validate' };
  const ok = { webhook: '/validate', code: '200' };
  return async (body) => {
    const started = performance.now();
    m.requestsInFlight.inc(labels);
    const reply = await webhook.serve(body, null);
    const text = JSON.stringify(reply.body);
    m.requestsTotal.inc(reply.status === 200 ? ok : { webhook: '/validate', code: String(reply.status) });
    m.latencySeconds.observe(labels, (performance.now() - started) / 1000);
    m.requestsInFlight.dec(labels);
    return text;
  };
}

/** The bare handler's work on one body: parse, the checks, serialize. */
async function bareLibrary() {
  return async (body) => {
    const r = JSON.parse(body.toString('utf8'));
    if (r?.apiVersion !== 'admission.k8s.io/v1' || r.kind !== 'AdmissionReview')
      throw new Error('bad review');
    const text = JSON.stringify({
      apiVersion: r.apiVersion,
      kind: 'AdmissionReview',
      response: { uid: r.request.uid, allowed: true },
    });
    await null; // a handler's answer is awaited in both
    return text;
  };
}

const libraryTask = (impl, make) => ({
  scenario: LIBRARY,
  impl,
  measure: async () => {
    const serve = await make();
    const bodies = Array.from({ length: 64 }, (_, i) => Buffer.from(review(i)));
    for (let i = 0; i < Math.min(REVIEWS, 5000); i++) await serve(bodies[i & 63]); // JIT first
    const cpu0 = cpuMs();
    const t0 = performance.now();
    for (let i = 0; i < REVIEWS; i++) await serve(bodies[i & 63]);
    const wall = performance.now() - t0;
    const cpu = cpuMs() - cpu0;
    return {
      opsPerSec: Math.max(1, Math.round((REVIEWS / wall) * 1000)),
      reviews: REVIEWS,
      cpuUsPerReview: round((cpu * 1000) / REVIEWS, 2),
      smoke: SMOKE,
    };
  },
});

export function tasks() {
  return [
    task(KUBELOOP, (dir) => kubeloopServer(dir)),
    task(BARE, (_dir, key, cert) => bareServer(key, cert)),
    libraryTask(KUBELOOP_LIB, kubeloopLibrary),
    libraryTask(BARE_LIB, bareLibrary),
  ];
}

export function summary(results) {
  const get = (impl) => {
    const r = results.find((x) => x.scenario === SCENARIO && x.impl === impl);
    return r?.medians ?? r;
  };
  const k = get(KUBELOOP);
  const b = get(BARE);
  const lib = (impl) => {
    const r = results.find((x) => x.scenario === LIBRARY && x.impl === impl);
    return r?.medians ?? r;
  };
  return [
    {
      scenario: SCENARIO,
      impl: `${KUBELOOP} vs ${BARE}`,
      ratio: ratio(k?.opsPerSec, b?.opsPerSec),
      ratioOf: 'reviews/s ÷ the bare node:https limit (target ≥ 0.8)',
      ratios: {
        p99Ms: { kubeloop: k?.p99Ms ?? null, limit: b?.p99Ms ?? null, ratio: ratio(k?.p99Ms, b?.p99Ms) },
        cpuPerReview: ratio(k?.cpuUsPerReview, b?.cpuUsPerReview),
      },
    },
    {
      scenario: LIBRARY,
      impl: `${KUBELOOP_LIB} vs ${BARE_LIB}`,
      ratio: ratio(lib(KUBELOOP_LIB)?.cpuUsPerReview, lib(BARE_LIB)?.cpuUsPerReview),
      ratioOf:
        'CPU µs per review of the library path ÷ the bare parse/serialize (context: what kubeloop adds)',
    },
  ];
}
