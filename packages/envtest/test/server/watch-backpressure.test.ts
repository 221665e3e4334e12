import { connect } from 'node:tls';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer, waitFor } from './helpers.js';

const CMS = '/api/v1/namespaces/default/configmaps';
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ watchBufferBytes: 256 * 1024 });
});
afterAll(async () => {
  await t.close();
});

it('closes a watcher that stops reading once its unread events pass the buffer, and keeps the one that reads', async () => {
  await t.req('POST', CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' } });
  const rv = (await t.req('GET', CMS)).body.metadata.resourceVersion;
  const reader = await t.watch(`${CMS}?watch=true&resourceVersion=${rv}`);
  // a client that sends the watch request, then never reads again
  const url = new URL(t.server.url);
  const slow = connect({
    host: url.hostname,
    port: Number(url.port),
    ca: t.server.caPem,
    ALPNProtocols: ['http/1.1'],
  });
  await new Promise<void>((resolve, reject) => {
    slow.once('secureConnect', () => resolve());
    slow.once('error', reject);
  });
  slow.write(
    `GET ${CMS}?watch=true&resourceVersion=${rv} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${t.server.token}\r\n\r\n`,
  );
  await waitFor(() => t.server.activeWatches() === 2, 5000, 'both watches');
  slow.pause();
  const value = 'x'.repeat(256 * 1024);
  let writes = 0;
  // Each update queues ~256 KiB for the slow watcher; the kernel's socket buffers take some, then the server's
  // queue passes the limit and the watch is closed. 400 writes (~100 MiB) is far beyond any socket buffer.
  while (t.server.activeWatches() === 2 && writes < 400) {
    const r = await t.req('PUT', `${CMS}/big`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'big' },
      data: { v: `${writes}${value}` },
    });
    expect(r.status).toBe(200);
    writes++;
  }
  expect(t.server.activeWatches()).toBe(1);
  expect(writes).toBeLessThan(400);
  // the watcher that reads is untouched and gets every event
  await reader.until((evs) => evs.length === writes, 30_000);
  expect(reader.events.every((e) => e.type === 'MODIFIED')).toBe(true);
  reader.close();
  slow.destroy();
}, 60_000);
