// Every fault the injector offers, shown on the wire: the real envtest API server over real HTTPS, read
// with a raw HTTP/1.1 reader (chunk boundaries, chunked terminator, socket end) or undici. The admin
// endpoint drives the server-side operations (compact, watch history, restart, connections, requests).
import { Agent, type Dispatcher, request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AdminServer, startAdminServer } from '../../src/admin.js';
import { type ApiServer, startApiServer } from '../../src/index.js';
import { type RawExchange, rawRequest, splitLines, waitFor } from './raw-wire.js';

// biome-ignore lint/suspicious/noExplicitAny: JSON read back in assertions
type Json = any;

let server: ApiServer;
let admin: AdminServer;
let agent: Dispatcher;
const open: RawExchange[] = [];

beforeAll(async () => {
  server = await startApiServer({ bookmarkIntervalMs: 0 });
  admin = await startAdminServer(server);
  agent = new Agent({ connect: { ca: server.caPem }, headersTimeout: 20_000, bodyTimeout: 0 });
});
afterAll(async () => {
  await admin.close();
  await server.stop();
  await agent.close();
});
beforeEach(() => {
  server.faults.reset();
  for (const x of open.splice(0)) x.destroy();
});

async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await request(new URL(path, server.url), {
    method: method as Dispatcher.HttpMethod,
    headers: {
      accept: 'application/json',
      authorization: `Bearer ${server.token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    dispatcher: agent,
  });
  const text = await res.body.text();
  let json: Json = text;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.statusCode, headers: res.headers, body: json as Json, text };
}

async function adminCall(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const res = await request(new URL(path, admin.url), {
    method: method as Dispatcher.HttpMethod,
    ...(body !== undefined
      ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
      : {}),
  });
  return { status: res.statusCode, body: (await res.body.json()) as Json };
}

function raw(path: string, method = 'GET'): RawExchange {
  const x = rawRequest({
    url: server.url,
    path,
    method,
    ca: server.caPem,
    headers: { Authorization: `Bearer ${server.token}` },
  });
  open.push(x);
  return x;
}

let seq = 0;
function podBody(name: string, extra: Json = {}): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...extra },
    spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
  };
}
async function newNamespace(): Promise<string> {
  const ns = `f${++seq}-${Date.now().toString(36)}`;
  const r = await api('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: ns },
  });
  expect(r.status).toBe(201);
  return ns;
}
async function createPod(ns: string, name: string, extra: Json = {}): Promise<Json> {
  const r = await api('POST', `/api/v1/namespaces/${ns}/pods`, podBody(name, extra));
  expect(r.status).toBe(201);
  return r.body;
}
async function listRv(ns: string): Promise<string> {
  return (await api('GET', `/api/v1/namespaces/${ns}/pods`)).body.metadata.resourceVersion;
}
function events(body: Buffer): Json[] {
  return splitLines(body).lines.map((l) => JSON.parse(l));
}

describe('failing requests', () => {
  it('fails the next N matching lists with 503 and a Status body, then lets them through', async () => {
    const ns = await newNamespace();
    const rule = server.faults.failRequests({
      match: { verb: 'list', namespace: ns },
      status: 503,
      times: 2,
    });
    const a = await api('GET', `/api/v1/namespaces/${ns}/pods`);
    const b = await api('GET', `/api/v1/namespaces/${ns}/pods`);
    const c = await api('GET', `/api/v1/namespaces/${ns}/pods`);
    expect([a.status, b.status, c.status]).toEqual([503, 503, 200]);
    expect(a.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the server is currently unable to handle the request',
      reason: 'ServiceUnavailable',
      code: 503,
    });
    expect(c.body.kind).toBe('PodList');
    expect(rule.hits).toBe(2);
    expect(rule.active).toBe(false);
    // Other verbs and namespaces were never affected.
    expect((await api('GET', '/api/v1/namespaces/default/pods')).status).toBe(200);
    expect(server.faults.requests({ faultId: rule.id }).map((r) => r.status)).toEqual([503, 503]);
  });

  it('answers 429 with Retry-After in seconds and details.retryAfterSeconds (C13)', async () => {
    const ns = await newNamespace();
    server.faults.failRequests({
      match: { verb: 'list', namespace: ns },
      status: 429,
      retryAfterSeconds: 2,
      times: 1,
    });
    const r = await api('GET', `/api/v1/namespaces/${ns}/pods`);
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBe('2');
    expect(r.body.reason).toBe('TooManyRequests');
    expect(r.body.details).toEqual({ retryAfterSeconds: 2 });
  });

  it('fails a seeded fraction of GETs, the same requests on every run (C13: 20 % of GETs)', async () => {
    const ns = await newNamespace();
    await createPod(ns, 'g');
    const run = async () => {
      const rule = server.faults.failRequests({
        match: { verb: 'get', namespace: ns },
        status: 429,
        retryAfterSeconds: 2,
        probability: 0.2,
        seed: 42,
      });
      const statuses: number[] = [];
      for (let i = 0; i < 100; i++)
        statuses.push((await api('GET', `/api/v1/namespaces/${ns}/pods/g`)).status);
      rule.clear();
      return { statuses, hits: rule.hits };
    };
    const first = await run();
    const second = await run();
    const failed = first.statuses.filter((s) => s === 429).length;
    expect(failed).toBe(first.hits);
    expect(failed).toBeGreaterThan(5);
    expect(failed).toBeLessThan(40);
    expect(first.statuses.filter((s) => s !== 429 && s !== 200)).toEqual([]);
    expect(second.statuses).toEqual(first.statuses);
  });

  it('initialList matches lists and streaming lists (watch with sendInitialEvents=true), not plain watches or gets', async () => {
    const ns = await newNamespace();
    await createPod(ns, 'p');
    const rule = server.faults.failRequests({ match: { initialList: true, namespace: ns }, status: 503 });
    const streaming = `/api/v1/namespaces/${ns}/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`;
    expect((await api('GET', `/api/v1/namespaces/${ns}/pods`)).status).toBe(503);
    expect((await raw(streaming).done).status).toBe(503);
    expect((await api('GET', `/api/v1/namespaces/${ns}/pods/p`)).status).toBe(200);
    const plain = raw(`/api/v1/namespaces/${ns}/pods?watch=true&resourceVersion=0`);
    expect((await plain.head).status).toBe(200);
    expect(rule.hits).toBe(2);
    // The request log answers the same question; initialList: false is the complement among them.
    expect(server.faults.requests({ initialList: true, namespace: ns }).map((r) => r.verb)).toEqual([
      'list',
      'watch',
    ]);
    expect(server.faults.requests({ initialList: false, namespace: ns }).map((r) => r.verb)).toEqual([
      'create',
      'get',
      'watch',
    ]);
  });

  it('fails a watch at once with 500, or with 200 and an empty body (C02)', async () => {
    const ns = await newNamespace();
    server.faults.failRequests({ match: { verb: 'watch', namespace: ns }, status: 500, times: 1 });
    server.faults.failRequests({
      match: { verb: 'watch', namespace: ns },
      status: 200,
      body: 'empty',
      times: 1,
    });
    const first = await raw(`/api/v1/namespaces/${ns}/pods?watch=true`).done;
    expect(first.status).toBe(500);
    expect(JSON.parse(first.body.toString())).toMatchObject({
      kind: 'Status',
      code: 500,
      reason: 'InternalError',
    });
    const second = await raw(`/api/v1/namespaces/${ns}/pods?watch=true`).done;
    expect(second.status).toBe(200);
    expect(second.end).toBe('clean');
    expect(second.body.length).toBe(0);
    // The third is a real watch: it stays open and delivers an event.
    const third = raw(`/api/v1/namespaces/${ns}/pods?watch=true`);
    expect((await third.head).status).toBe(200);
    await createPod(ns, 'x');
    await waitFor(() => third.chunks.length > 0, 'an event on the healthy watch');
    expect(JSON.parse(third.chunks[0]!.data.toString())).toMatchObject({ type: 'ADDED' });
  });
});

describe('raw reply bodies', () => {
  it('answers a list with exactly the given text: a truncated JSON list, then the real list', async () => {
    const ns = await newNamespace();
    await createPod(ns, 'a');
    const truncated =
      '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[{"metad';
    const rule = server.faults.failRequests({
      match: { verb: 'list', namespace: ns },
      status: 200,
      body: { raw: truncated },
      times: 1,
    });
    const first = await raw(`/api/v1/namespaces/${ns}/pods`).done;
    expect(first.status).toBe(200);
    expect(first.body.toString()).toBe(truncated);
    expect(first.headers['content-type']).toBe('application/json');
    expect(rule.hits).toBe(1);
    const second = await raw(`/api/v1/namespaces/${ns}/pods`).done;
    expect(JSON.parse(second.body.toString())).toMatchObject({
      kind: 'PodList',
      items: [{ metadata: { name: 'a' } }],
    });
  });

  it('answers with exactly the given bytes, invalid UTF-8 included', async () => {
    const ns = await newNamespace();
    const bytes = Buffer.concat([
      Buffer.from('{"kind":"PodList","items":[{"a":"'),
      Buffer.from([0xc3, 0x28, 0xff]),
      Buffer.from('"}]}'),
    ]);
    server.faults.failRequests({
      match: { verb: 'list', namespace: ns },
      status: 200,
      body: { rawBase64: bytes.toString('base64') },
      times: 1,
    });
    const reply = await raw(`/api/v1/namespaces/${ns}/pods`).done;
    expect(reply.body.equals(bytes)).toBe(true);
    expect(() => server.faults.failRequests({ status: 200, body: { rawBase64: '%%' } })).toThrow(/fail.body/);
  });
});

describe('410 Expired', () => {
  it('answers lists, continues and watches as after a compaction', async () => {
    const ns = await newNamespace();
    const rule = server.faults.expire({ match: { namespace: ns }, times: 3 });
    const list = await api(
      'GET',
      `/api/v1/namespaces/${ns}/pods?resourceVersion=5&resourceVersionMatch=Exact`,
    );
    expect(list.status).toBe(410);
    expect(list.body).toMatchObject({
      reason: 'Expired',
      code: 410,
      message: 'The resourceVersion for the provided list is too old.',
    });
    const cont = await api('GET', `/api/v1/namespaces/${ns}/pods?limit=1&continue=abc`);
    expect(cont.status).toBe(410);
    expect(cont.body.message).toMatch(/^The provided continue parameter is too old/);
    // The watch: HTTP 200, exactly one ERROR event carrying a 410 Status, then a clean chunked end (C03).
    const w = await raw(`/api/v1/namespaces/${ns}/pods?watch=true&resourceVersion=7`).done;
    expect(w.status).toBe(200);
    expect(w.end).toBe('clean');
    const evs = events(w.body);
    expect(evs).toHaveLength(1);
    expect(evs[0]).toMatchObject({
      type: 'ERROR',
      object: { kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 },
    });
    expect(evs[0].object.message).toMatch(/^too old resource version: 7 /);
    expect(rule.hits).toBe(3);
  });
});

describe('ending and black-holing watches', () => {
  it('ends watches cleanly after N ms, for the next K watches (C01, C11)', async () => {
    const ns = await newNamespace();
    const watchesBefore = server.activeWatches();
    const rule = server.faults.endWatches({
      match: { verb: 'watch', namespace: ns },
      afterMs: 10,
      times: 25,
    });
    for (let i = 0; i < 25; i++) {
      const r = await raw(`/api/v1/namespaces/${ns}/pods?watch=true`).done;
      expect(r.status).toBe(200);
      expect(r.end).toBe('clean');
    }
    expect(rule.hits).toBe(25);
    expect(rule.active).toBe(false);
    // The server saw every one of them end: no watch is left registered.
    await waitFor(() => server.activeWatches() <= watchesBefore, 'the ended watches to be released');
  });

  it('ends a watch cleanly right after N events', async () => {
    const ns = await newNamespace();
    await createPod(ns, 'a');
    await createPod(ns, 'b');
    await createPod(ns, 'c');
    server.faults.endWatches({ match: { verb: 'watch', namespace: ns }, afterEvents: 2 });
    const r = await raw(`/api/v1/namespaces/${ns}/pods?watch=true`).done;
    expect(r.end).toBe('clean');
    expect(events(r.body).map((e) => e.type)).toEqual(['ADDED', 'ADDED']);
  });

  it('black-holes a watch: 200 and headers, then nothing, socket open, counted', async () => {
    const ns = await newNamespace();
    const before = server.openConnections();
    server.faults.blackhole({ match: { verb: 'watch', namespace: ns }, times: 1 });
    const hole = raw(`/api/v1/namespaces/${ns}/pods?watch=true`);
    expect((await hole.head).status).toBe(200);
    const healthy = raw(`/api/v1/namespaces/${ns}/pods?watch=true`);
    await healthy.head;
    await createPod(ns, 'p');
    await waitFor(() => healthy.chunks.length > 0, 'the event on the healthy watch');
    expect(hole.chunks).toHaveLength(0);
    expect(hole.socket.destroyed).toBe(false);
    expect(server.openConnections()).toBeGreaterThanOrEqual(before + 2);
    const conns = await adminCall('GET', '/connections');
    expect(conns.body.blackholed).toBe(1);
    expect(conns.body.open).toBe(server.openConnections());
    // Releasing ends it cleanly, still without a single byte of body.
    expect((await adminCall('DELETE', '/blackholes')).body).toEqual({ released: 1 });
    const r = await hole.done;
    expect(r.end).toBe('clean');
    expect(r.body.length).toBe(0);
  });
});

describe('watch stream shaping', () => {
  it('C10: E1 split over 3 chunks (one cut inside a UTF-8 character), E2–E4 in one chunk, E5 unterminated, clean end', async () => {
    const ns = await newNamespace();
    const rv = await listRv(ns);
    server.faults.shapeWatch({
      match: { verb: 'watch', namespace: ns },
      times: 1,
      steps: [
        { op: 'split', parts: 3, delayMs: 50, insideUtf8: true },
        { op: 'merge', count: 3 },
        { op: 'noNewline' },
      ],
    });
    const w = raw(`/api/v1/namespaces/${ns}/pods?watch=true&resourceVersion=${rv}`);
    await w.head;
    await createPod(ns, 'e1', { annotations: { note: 'grüße – ☃' } });
    for (const n of ['e2', 'e3', 'e4', 'e5']) await createPod(ns, n);
    const r = await w.done;
    expect(r.end).toBe('clean');
    expect(r.chunks).toHaveLength(5);
    const [c1, c2, c3, c4, c5] = r.chunks.map((c) => c.data);
    const e1 = Buffer.concat([c1!, c2!, c3!]);
    expect(e1.at(-1)).toBe(0x0a);
    expect(JSON.parse(e1.toString()).object.metadata.annotations.note).toBe('grüße – ☃');
    // One of the first two chunks ends in the middle of a multi-byte character.
    expect([c1!, c2!].some((c) => (c.at(-1)! & 0xc0) === 0xc0 || (c.at(-1)! & 0xc0) === 0x80)).toBe(true);
    expect(splitLines(c4!).lines.map((l) => JSON.parse(l).object.metadata.name)).toEqual(['e2', 'e3', 'e4']);
    expect(splitLines(c4!).rest).toBe('');
    expect(c5!.at(-1)).not.toBe(0x0a);
    expect(JSON.parse(c5!.toString()).object.metadata.name).toBe('e5');
  });

  it('C09: half a frame then a clean end; an HTML line; a bare Status frame', async () => {
    const ns = await newNamespace();
    await createPod(ns, 'a');
    await createPod(ns, 'b');
    server.faults.shapeWatch({
      match: { namespace: ns },
      times: 1,
      steps: [{ op: 'pass' }, { op: 'truncate' }],
    });
    const t = await raw(`/api/v1/namespaces/${ns}/pods?watch=true`).done;
    expect(t.end).toBe('clean');
    const { lines, rest } = splitLines(t.body);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!).object.metadata.name).toBe('a');
    expect(rest.length).toBeGreaterThan(0);
    expect(() => JSON.parse(rest)).toThrow();

    const html = '<html><body><h1>502 Bad Gateway</h1></body></html>\n';
    server.faults.shapeWatch({
      match: { namespace: ns },
      times: 1,
      steps: [
        { op: 'pass' },
        { op: 'raw', data: html },
        { op: 'status', code: 500, message: 'etcd down', after: 'end' },
      ],
    });
    const h = await raw(`/api/v1/namespaces/${ns}/pods?watch=true`).done;
    const hl = splitLines(h.body).lines;
    expect(hl).toHaveLength(3);
    expect(JSON.parse(hl[0]!).type).toBe('ADDED');
    expect(`${hl[1]}\n`).toBe(html);
    expect(JSON.parse(hl[2]!)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'etcd down',
      reason: 'InternalError',
      code: 500,
    });
    expect(h.end).toBe('clean');
  });

  it('destroys the connection mid-frame when asked (no chunked terminator)', async () => {
    const ns = await newNamespace();
    await createPod(ns, 'a');
    server.faults.shapeWatch({
      match: { namespace: ns },
      times: 1,
      steps: [{ op: 'truncate', after: 'destroy' }],
    });
    const r = await raw(`/api/v1/namespaces/${ns}/pods?watch=true`).done;
    expect(r.end).not.toBe('clean');
  });
});

describe('delayed events for one object (C08)', () => {
  it("'stream' order: the delayed event holds the stream, order stays by resourceVersion", async () => {
    const ns = await newNamespace();
    const rv = await listRv(ns);
    const rule = server.faults.delayEvents({ namespace: ns, name: 'child', delayMs: 300 });
    const w = raw(`/api/v1/namespaces/${ns}/pods?watch=true&resourceVersion=${rv}`);
    await w.head;
    await createPod(ns, 'child');
    await createPod(ns, 'other');
    await waitFor(
      () => splitLines(Buffer.concat(w.chunks.map((c) => c.data))).lines.length >= 2,
      'two events',
    );
    const names = events(Buffer.concat(w.chunks.map((c) => c.data))).map((e) => e.object.metadata.name);
    expect(names).toEqual(['child', 'other']);
    expect(rule.hits).toBe(1);
  });

  it("'object' order: other objects overtake the held one", async () => {
    const ns = await newNamespace();
    const rv = await listRv(ns);
    server.faults.delayEvents({ namespace: ns, name: 'child', delayMs: 1500, order: 'object' });
    const w = raw(`/api/v1/namespaces/${ns}/pods?watch=true&resourceVersion=${rv}`);
    await w.head;
    await createPod(ns, 'child');
    await createPod(ns, 'other');
    const seen = () => events(Buffer.concat(w.chunks.map((c) => c.data))).map((e) => e.object.metadata.name);
    await waitFor(() => seen().length >= 1, 'the first event');
    expect(seen()).toEqual(['other']);
    await waitFor(() => seen().length >= 2, 'the delayed event');
    expect(seen()).toEqual(['other', 'child']);
  });
});

describe('streaming lists without the end bookmark (C04)', () => {
  it('sends the initial ADDED events but never the k8s.io/initial-events-end bookmark', async () => {
    const ns = await newNamespace();
    await createPod(ns, 'a');
    await createPod(ns, 'b');
    const path = `/api/v1/namespaces/${ns}/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`;
    // Without the rule, the server sends the marker (so the test below can fail).
    server.faults.endWatches({ match: { namespace: ns }, afterEvents: 3, times: 1 });
    const normal = await raw(path).done;
    const ne = events(normal.body);
    expect(ne.map((e) => e.type)).toEqual(['ADDED', 'ADDED', 'BOOKMARK']);
    expect(ne[2].object.metadata.annotations['k8s.io/initial-events-end']).toBe('true');

    const rule = server.faults.suppressInitialEventsEnd({ match: { namespace: ns }, times: 1 });
    const w = raw(path);
    await w.head;
    await createPod(ns, 'c');
    const got = () => events(Buffer.concat(w.chunks.map((c) => c.data)));
    await waitFor(() => got().length >= 3, 'initial events and the live ADDED');
    expect(got().map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['ADDED', 'a'],
      ['ADDED', 'b'],
      ['ADDED', 'c'],
    ]);
    expect(rule.hits).toBe(1);
  });
});

describe('selector-required rule (C19)', () => {
  it('answers 403 to list and watch unless they carry exactly the field selector', async () => {
    const ns = await newNamespace();
    const rule = server.faults.requireSelector({
      match: { namespace: ns, resource: 'pods' },
      fieldSelector: 'metadata.name=s1',
      labelSelector: 'env in (a,b),tier!=web,!legacy',
    });
    const sel = `fieldSelector=${encodeURIComponent('metadata.name=s1')}&labelSelector=${encodeURIComponent('env in (a,b),tier!=web,!legacy')}`;
    const bare = await api('GET', `/api/v1/namespaces/${ns}/pods`);
    expect(bare.status).toBe(403);
    expect(bare.body).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      code: 403,
      details: { kind: 'pods' },
    });
    expect((await api('GET', `/api/v1/namespaces/${ns}/pods?fieldSelector=metadata.name%3Ds1`)).status).toBe(
      403,
    );
    expect((await api('GET', `/api/v1/namespaces/${ns}/pods?${sel}`)).status).toBe(200);
    expect((await raw(`/api/v1/namespaces/${ns}/pods?watch=true`).done).status).toBe(403);
    const ok = raw(`/api/v1/namespaces/${ns}/pods?watch=true&${sel}`);
    expect((await ok.head).status).toBe(200);
    expect(rule.hits).toBe(3);
  });
});

describe('admin endpoint against the real server', () => {
  it('POST /faults adds a rule that acts on the wire; GET /requests shows it', async () => {
    const ns = await newNamespace();
    const since = Date.now();
    const added = await adminCall('POST', '/faults', {
      type: 'fail',
      status: 500,
      times: 1,
      match: { verb: 'list', namespace: ns },
    });
    expect(added.status).toBe(201);
    expect((await api('GET', `/api/v1/namespaces/${ns}/pods`)).status).toBe(500);
    expect((await api('GET', `/api/v1/namespaces/${ns}/pods`)).status).toBe(200);
    const log = await adminCall('GET', `/requests?verb=list&namespace=${ns}&since=${since}`);
    expect(log.body.map((r: Json) => [r.status, r.faultId ?? null])).toEqual([
      [500, added.body.id],
      [200, null],
    ]);
    expect((await adminCall('GET', `/faults/${added.body.id}`)).body).toMatchObject({
      hits: 1,
      active: false,
    });
  });

  it('POST /compact: continue tokens and exact lists from before get 410 Expired', async () => {
    const ns = await newNamespace();
    for (const n of ['a', 'b', 'c']) await createPod(ns, n);
    const page = await api('GET', `/api/v1/namespaces/${ns}/pods?limit=1`);
    const token = page.body.metadata.continue;
    expect(token).toBeTruthy();
    await createPod(ns, 'd');
    const compacted = await adminCall('POST', '/compact', {});
    expect(compacted.status).toBe(200);
    expect(Number(compacted.body.resourceVersion)).toBeGreaterThan(
      Number(page.body.metadata.resourceVersion),
    );
    const cont = await api(
      'GET',
      `/api/v1/namespaces/${ns}/pods?limit=1&continue=${encodeURIComponent(token)}`,
    );
    expect(cont.status).toBe(410);
    expect(cont.body.reason).toBe('Expired');
    const exact = await api(
      'GET',
      `/api/v1/namespaces/${ns}/pods?resourceVersion=${page.body.metadata.resourceVersion}&resourceVersionMatch=Exact`,
    );
    expect(exact.status).toBe(410);
  });

  it('POST /watch-history: a watch from before the window gets ERROR 410 and a clean end', async () => {
    const ns = await newNamespace();
    const rv = await listRv(ns);
    for (const n of ['a', 'b', 'c', 'd']) await createPod(ns, n);
    expect((await adminCall('POST', '/watch-history', { limit: 2 })).status).toBe(200);
    try {
      const r = await raw(`/api/v1/namespaces/${ns}/pods?watch=true&resourceVersion=${rv}`).done;
      expect(r.status).toBe(200);
      expect(r.end).toBe('clean');
      const evs = events(r.body);
      expect(evs).toHaveLength(1);
      expect(evs[0]).toMatchObject({ type: 'ERROR', object: { reason: 'Expired', code: 410 } });
    } finally {
      server.faults.setWatchHistoryLimit(10_000);
    }
  });

  it('POST /restart drops every connection; keepState keeps objects, keepState:false loses them', async () => {
    const ns = await newNamespace();
    await createPod(ns, 'kept');
    const w = raw(`/api/v1/namespaces/${ns}/pods?watch=true`);
    await w.head;
    expect((await adminCall('POST', '/restart', { keepState: true })).body).toEqual({
      restarted: true,
      keepState: true,
    });
    const ended = await w.done;
    expect(ended.end).not.toBe('clean');
    expect((await api('GET', `/api/v1/namespaces/${ns}/pods/kept`)).status).toBe(200);
    expect((await adminCall('POST', '/restart', { keepState: false })).status).toBe(200);
    expect((await api('GET', `/api/v1/namespaces/${ns}/pods/kept`)).status).toBe(404);
    expect((await api('GET', '/api/v1/namespaces/default')).status).toBe(200);
  });

  it('restart({ keepState: true }) keeps every resourceVersion: a watch from before it resumes without 410', async () => {
    const ns = await newNamespace();
    const a = await createPod(ns, 'a');
    const rvBefore = await listRv(ns);
    await server.faults.restart({ keepState: true });
    // The test's pooled connection died with the restart; undici reports that once (a GET is not retried).
    await api('GET', '/healthz').catch(() => undefined);
    const after = await api('GET', `/api/v1/namespaces/${ns}/pods/a`);
    expect(after.body.metadata.resourceVersion).toBe(a.metadata.resourceVersion);
    expect(await listRv(ns)).toBe(rvBefore);
    const b = await createPod(ns, 'b');
    expect(Number(b.metadata.resourceVersion)).toBeGreaterThan(Number(rvBefore));
    server.faults.endWatches({ match: { verb: 'watch', namespace: ns }, afterEvents: 1, times: 1 });
    const w = await raw(`/api/v1/namespaces/${ns}/pods?watch=true&resourceVersion=${rvBefore}`).done;
    expect(events(w.body).map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'b']]);
  });
});

describe('per-client and slow requests', () => {
  it("fails only one client's requests, chosen by bearer token (e.g. 401 to an expired credential, C16)", async () => {
    const other = 'second-client-token-0123456789';
    server.auth.addToken(other, { user: 'second', groups: ['system:masters'] });
    const ns = await newNamespace();
    const rule = server.faults.failRequests({
      match: { token: other, namespace: ns },
      status: 401,
      message: 'Unauthorized',
    });
    const mine = await api('GET', `/api/v1/namespaces/${ns}/pods`);
    const theirs = await api('GET', `/api/v1/namespaces/${ns}/pods`, undefined, {
      authorization: `Bearer ${other}`,
    });
    expect(mine.status).toBe(200);
    expect(theirs.status).toBe(401);
    expect(theirs.body).toMatchObject({ reason: 'Unauthorized', code: 401 });
    expect(rule.hits).toBe(1);
    // The token never reaches the request log.
    expect(JSON.stringify(server.faults.requests())).not.toContain(other);
  });

  it('holds writes at a barrier and lets them through together (C20: two writers at the same moment)', async () => {
    const ns = await newNamespace();
    const created = await createPod(ns, 'fin', { finalizers: ['a.example.com/x', 'b.example.com/y'] });
    const rule = server.faults.delayRequests({
      match: { verb: 'patch', namespace: ns },
      barrier: 2,
      times: 2,
    });
    const patch = (keep: string) =>
      api(
        'PATCH',
        `/api/v1/namespaces/${ns}/pods/fin`,
        { metadata: { resourceVersion: created.metadata.resourceVersion, finalizers: [keep] } },
        { 'content-type': 'application/merge-patch+json' },
      );
    const first = patch('b.example.com/y');
    // The first is held: nothing has changed at the server yet.
    await waitFor(() => rule.hits === 1, 'the first patch to reach the barrier');
    expect((await api('GET', `/api/v1/namespaces/${ns}/pods/fin`)).body.metadata.resourceVersion).toBe(
      created.metadata.resourceVersion,
    );
    const second = patch('a.example.com/x');
    const statuses = [(await first).status, (await second).status].sort();
    // Both carried the same resourceVersion precondition: exactly one wins, the other gets 409.
    expect(statuses).toEqual([200, 409]);
    expect(rule.hits).toBe(2);
  });

  it('holds a request for delayMs, then serves it normally', async () => {
    const ns = await newNamespace();
    const rule = server.faults.delayRequests({
      match: { verb: 'list', namespace: ns },
      delayMs: 50,
      times: 1,
    });
    const r = await api('GET', `/api/v1/namespaces/${ns}/pods`);
    expect(r.status).toBe(200);
    expect(r.body.kind).toBe('PodList');
    expect(rule.hits).toBe(1);
  });
});
