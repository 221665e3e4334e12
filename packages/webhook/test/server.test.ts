import fc from 'fast-check';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdmissionWebhook, ConversionWebhook, parseBindAddress, WebhookServer } from '../src/index.js';
import { admissionReview, loopbackPki, post, staticSource } from './support/tls.js';

describe('WebhookServer', () => {
  let caPem = '';
  let server: WebhookServer;
  const ac = new AbortController();
  let running: Promise<void>;
  const registry = new Registry();
  let release: () => void = () => {};
  let port = 0;

  beforeAll(async () => {
    const { ca, serving } = await loopbackPki();
    caPem = ca.cert;
    server = new WebhookServer({
      bindAddress: '127.0.0.1:0',
      certificateSource: staticSource(serving),
      metricsRegistry: registry,
    });
    server.register('/validate-ok', new AdmissionWebhook('validate-ok', () => ({ allowed: true })));
    server.register(
      '/validate-held',
      new AdmissionWebhook(
        'validate-held',
        () =>
          new Promise((resolve) => {
            release = () => resolve({ allowed: true });
          }),
        { timeoutMs: 60_000 },
      ),
    );
    server.register('/convert', new ConversionWebhook());
    running = server.start(ac.signal);
    await server.ready();
    port = server.port() as number;
  });
  afterAll(async () => {
    ac.abort();
    await running;
  });

  it('answers a review at its path, 404 elsewhere, 405 on GET, 400 on a wrong content type', async () => {
    const ok = await post(port, '/validate-ok', JSON.stringify(admissionReview({})), caPem);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'uid-1', allowed: true },
    });
    expect((await post(port, '/nowhere', '{}', caPem)).status).toBe(404);
    // targets other than a plain path are normalized as WHATWG URLs are (dot segments, percent-encoding)
    const dotted = await post(
      port,
      '/x/../validate-ok?timeout=5s',
      JSON.stringify(admissionReview({})),
      caPem,
    );
    expect(dotted.status).toBe(200);
    expect((await post(port, '/validate%2Dok', JSON.stringify(admissionReview({})), caPem)).status).toBe(404);
    expect((await post(port, '/validate-ok', '', caPem, {}, 'GET')).status).toBe(405);
    const ct = await post(port, '/validate-ok', '{}', caPem, { 'content-type': 'text/plain' });
    expect(ct.status).toBe(400);
    expect((ct.body as { message: string }).message).toBe(
      'contentType=text/plain, expected application/json',
    );
    expect(() => server.register('/validate-ok', new ConversionWebhook())).toThrow(/registered already/);
  });

  it('reads the media type from the first Content-Type header in any case of its name, parameters aside', async () => {
    const body = JSON.stringify(admissionReview({}));
    const upper = await post(port, '/validate-ok', body, caPem, {
      'Content-Type': 'application/json; charset=utf-8',
    });
    expect(upper.status).toBe(200);
    const none = await post(port, '/validate-ok', body, caPem, {});
    expect(none.status).toBe(400);
    expect((none.body as { message: string }).message).toBe('contentType=(none), expected application/json');
  });

  it('a raw handler that answers no reply, or throws, answers 500 and the server goes on serving', async () => {
    server.register('/raw-nothing', { serve: () => undefined as never });
    server.register('/raw-later', { serve: async () => null as never });
    server.register('/raw-throws', {
      serve: () => {
        throw new Error('boom');
      },
    });
    for (const path of ['/raw-nothing', '/raw-later', '/raw-throws']) {
      const r = await post(port, path, '{}', caPem);
      expect(r.status).toBe(500);
      expect((r.body as { message: string }).message).toBe(`webhook ${path} failed`);
    }
    expect((await post(port, '/validate-ok', JSON.stringify(admissionReview({})), caPem)).status).toBe(200);
  });

  it('a 10 MiB body answers 400 naming the limit, and the server goes on serving', async () => {
    const big = Buffer.alloc(10 * 1024 * 1024, 'a');
    const r = await post(port, '/validate-ok', big, caPem);
    expect(r.status).toBe(400);
    expect((r.body as { message: string }).message).toBe(
      'request entity is too large: limit is 3145728 bytes',
    );
    expect((await post(port, '/validate-ok', JSON.stringify(admissionReview({})), caPem)).status).toBe(200);
  });

  it('fuzzed bodies and wrong versions answer 400 (or a review), never a crash', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')),
          fc
            .record({
              apiVersion: fc.string(),
              kind: fc.constantFrom('AdmissionReview', 'ConversionReview', 'x'),
              request: fc.anything(),
            })
            .map((o) => JSON.stringify(o)),
        ),
        fc.constantFrom('/validate-ok', '/convert'),
        async (body, path) => {
          const r = await post(port, path, body, caPem);
          if (r.status === 200) {
            expect((r.body as { response: { uid: string } }).response.uid).toBeTruthy();
          } else {
            expect(r.status).toBe(400);
            expect((r.body as { kind: string; message: string }).kind).toBe('Status');
          }
        },
      ),
      { numRuns: 120 },
    );
    expect(
      (await post(port, '/validate-ok', JSON.stringify(admissionReview({}, 'admission.k8s.io/v2')), caPem))
        .status,
    ).toBe(400);
  });

  it('records controller-runtime webhook metrics by path and code, and in-flight requests', async () => {
    const pending = post(port, '/validate-held', JSON.stringify(admissionReview({})), caPem);
    await expect.poll(() => server.inFlight()).toBe(1);
    const text = await registry.metrics();
    expect(text).toContain('controller_runtime_webhook_requests_in_flight{webhook="/validate-held"} 1');
    release();
    expect((await pending).status).toBe(200);
    // Its own 200 and 400 at /validate-ok: under `--sequence.shuffle` this test can run before the ones that
    // post there (it failed a shuffled soak run that way).
    expect((await post(port, '/validate-ok', JSON.stringify(admissionReview({})), caPem)).status).toBe(200);
    expect((await post(port, '/validate-ok', '{', caPem)).status).toBe(400);
    const after = await registry.metrics();
    expect(after).toMatch(
      /controller_runtime_webhook_requests_total\{webhook="\/validate-ok",code="200"\} \d+/,
    );
    expect(after).toMatch(
      /controller_runtime_webhook_requests_total\{webhook="\/validate-ok",code="400"\} \d+/,
    );
    expect(after).toContain(
      'controller_runtime_webhook_latency_seconds_bucket{le="0.005",webhook="/validate-held"}',
    );
    expect(after).toContain('controller_runtime_webhook_requests_in_flight{webhook="/validate-held"} 0');
  });

  it('the started checker passes once serving', async () => {
    await expect(server.startedChecker()(new AbortController().signal)).resolves.toBeUndefined();
  });
});

describe('WebhookServer lifecycle', () => {
  it('stopping lets an in-flight review finish, then refuses new connections', async () => {
    const { ca, serving } = await loopbackPki();
    let release: () => void = () => {};
    const server = new WebhookServer({
      bindAddress: '127.0.0.1:0',
      certificateSource: staticSource(serving),
    });
    server.register(
      '/h',
      new AdmissionWebhook(
        'h',
        () =>
          new Promise((r) => {
            release = () => r({ allowed: true });
          }),
        { timeoutMs: 60_000 },
      ),
    );
    const ac = new AbortController();
    const running = server.start(ac.signal);
    await server.ready();
    const port = server.port() as number;
    const pending = post(port, '/h', JSON.stringify(admissionReview({})), ca.cert);
    await expect.poll(() => server.inFlight()).toBe(1);
    ac.abort();
    let stopped = false;
    void running.then(() => {
      stopped = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    release();
    const r = await pending;
    expect(r.status).toBe(200);
    expect((r.body as { response: { allowed: boolean } }).response.allowed).toBe(true);
    await running;
    await expect(post(port, '/h', '{}', ca.cert)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('"0" disables; a bad bind address throws naming the option; a taken port rejects start and ready', async () => {
    const off = new WebhookServer({ bindAddress: '0' });
    await off.start(new AbortController().signal);
    await expect(off.ready()).resolves.toBeUndefined();
    expect(off.address()).toBeUndefined();
    expect(() => new WebhookServer({ bindAddress: 'nonsense' })).toThrow(/bindAddress: expected "host:port"/);
    expect(parseBindAddress(':9443')).toEqual({ host: undefined, port: 9443 });
    expect(parseBindAddress('[::1]:8443')).toEqual({ host: '::1', port: 8443 });
    const { serving } = await loopbackPki();
    const a = new WebhookServer({ bindAddress: '127.0.0.1:0', certificateSource: staticSource(serving) });
    const ac = new AbortController();
    const running = a.start(ac.signal);
    await a.ready();
    const b = new WebhookServer({
      bindAddress: `127.0.0.1:${a.port()}`,
      certificateSource: staticSource(serving),
    });
    await expect(b.start(new AbortController().signal)).rejects.toThrow(/EADDRINUSE/);
    await expect(b.ready()).rejects.toThrow(/EADDRINUSE/);
    ac.abort();
    await running;
  });

  it('without a certificate the start fails naming the files', async () => {
    const s = new WebhookServer({ bindAddress: '127.0.0.1:0', certDir: '/nonexistent-kubeloop' });
    await expect(s.start(new AbortController().signal)).rejects.toThrow(
      /cannot read \/nonexistent-kubeloop\/tls.crt/,
    );
  });
});
