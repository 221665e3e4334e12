// C17 at the transport level: a server on 127.0.0.1 whose certificate's only SAN is `api.internal`.

import diagnosticsChannel from 'node:diagnostics_channel';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RestConfig } from '@kubeloop/config';
import { type Clock, realClock } from '@kubeloop/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Transport, TransportError } from '../../src/transport/index.js';
import { startTestServer, type TestServer } from './support/https-server.js';
import { createTestCa, type TestCa } from './support/pki.js';

let caC: TestCa;
let caD: TestCa;
let server: TestServer;

beforeAll(async () => {
  caC = await createTestCa('ca-c');
  caD = await createTestCa('ca-d');
  const leaf = await caC.issue({ dnsNames: ['api.internal'] });
  server = await startTestServer({ ...leaf, caPem: caC.certPem, requestCert: true }, (req, res) => {
    const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate();
    const cn = peer && 'subject' in peer && peer.subject ? peer.subject.CN : null;
    if (req.url?.includes('watch=true')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"type":"ADDED","object":{}}\n');
      res.end('{"type":"MODIFIED","object":{}}\n');
      return;
    }
    res.end(JSON.stringify({ clientCN: cn ?? null }));
  });
});
afterAll(() => server.close());

function config(tls: RestConfig['tlsClientConfig']): RestConfig {
  return { host: server.url, tlsClientConfig: tls, qps: -1, burst: 0, timeoutMs: 0, userAgent: 'tls-test' };
}

async function both(t: Transport): Promise<{ get: unknown; watch: unknown }> {
  const out: { get: unknown; watch: unknown } = { get: undefined, watch: undefined };
  try {
    out.get = await t
      .request({ method: 'GET', path: '/api' })
      .then((r) => r.body.json())
      .catch((e: unknown) => e);
    out.watch = await t
      .request({ method: 'GET', path: '/api/v1/pods?watch=true', stream: true })
      .then((r) => r.body.text())
      .catch((e: unknown) => e);
  } finally {
    await t.close();
  }
  return out;
}

const WATCH = '{"type":"ADDED","object":{}}\n{"type":"MODIFIED","object":{}}\n';

function tlsFailure(e: unknown): string | undefined {
  return e instanceof TransportError ? e.code : `not a TransportError: ${String(e)}`;
}

describe('C17 TLS knobs (plain requests and watches)', () => {
  it('CA C + serverName api.internal works', async () => {
    const r = await both(new Transport(config({ caData: caC.certPem, serverName: 'api.internal' })));
    expect(r).toEqual({ get: { clientCN: null }, watch: WATCH });
  });

  it('CA C alone fails on the host name', async () => {
    const r = await both(new Transport(config({ caData: caC.certPem })));
    expect([tlsFailure(r.get), tlsFailure(r.watch)]).toEqual(['TLSFailed', 'TLSFailed']);
  });

  it('insecure alone works', async () => {
    const r = await both(new Transport(config({ insecure: true })));
    expect(r).toEqual({ get: { clientCN: null }, watch: WATCH });
  });

  it('insecure logs and publishes exactly one warning per transport, however many requests and pools', async () => {
    const logged: string[] = [];
    const logger = {
      debug() {},
      info() {},
      warn(_f: Record<string, unknown>, msg: string) {
        logged.push(msg);
      },
      error() {},
      child() {
        return logger;
      },
    };
    const published: string[] = [];
    const onWarning = (m: unknown) => published.push((m as { message: string }).message);
    diagnosticsChannel.subscribe('kubeloop:client:warning', onWarning);
    try {
      const t = new Transport(config({ insecure: true }), { logger });
      await t.request({ method: 'GET', path: '/api' }).then((r) => r.body.text());
      await t.request({ method: 'GET', path: '/apis' }).then((r) => r.body.text());
      const r = await both(t);
      expect(r).toEqual({ get: { clientCN: null }, watch: WATCH });
      expect(logged.filter((m) => /TLS verification is disabled/.test(m))).toHaveLength(1);
      expect(published.filter((m) => /TLS verification is disabled/.test(m))).toHaveLength(1);
      // A second transport warns once more (its own); a verifying one never does.
      await new Transport(config({ insecure: true }), { logger }).close();
      await new Transport(config({ caData: caC.certPem, serverName: 'api.internal' }), { logger }).close();
      expect(logged.filter((m) => /TLS verification is disabled/.test(m))).toHaveLength(2);
    } finally {
      diagnosticsChannel.unsubscribe('kubeloop:client:warning', onWarning);
    }
  });

  it('a wrong CA fails even with the right serverName', async () => {
    const r = await both(new Transport(config({ caData: caD.certPem, serverName: 'api.internal' })));
    expect([tlsFailure(r.get), tlsFailure(r.watch)]).toEqual(['TLSFailed', 'TLSFailed']);
  });

  it('CA and insecure together is a config error', () => {
    expect(() => new Transport(config({ caData: caC.certPem, insecure: true }))).toThrow(
      expect.objectContaining({ code: 'InvalidConfig' }),
    );
  });

  it('presents a static client certificate (mTLS)', async () => {
    const client = await caC.issue({ client: true, commonName: 'kubeloop-client' });
    const r = await both(
      new Transport(
        config({
          caData: caC.certPem,
          serverName: 'api.internal',
          certData: client.certPem,
          keyData: client.keyPem,
        }),
      ),
    );
    expect(r.get).toEqual({ clientCN: 'kubeloop-client' });
  });

  it('re-reads client certificate and CA files every 5 minutes and switches connections when they change', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeloop-tls-reload-'));
    try {
      const a = await caC.issue({ client: true, commonName: 'cert-a' });
      const b = await caC.issue({ client: true, commonName: 'cert-b' });
      const files = {
        ca: path.join(dir, 'ca.crt'),
        cert: path.join(dir, 'tls.crt'),
        key: path.join(dir, 'tls.key'),
      };
      fs.writeFileSync(files.ca, caD.certPem); // the wrong CA first
      fs.writeFileSync(files.cert, a.certPem);
      fs.writeFileSync(files.key, a.keyPem);
      const clock = { t: 0 };
      const manual: Clock = { now: () => clock.t, setTimer: realClock.setTimer };
      const t = new Transport(
        config({
          caData: caD.certPem,
          caFile: files.ca,
          serverName: 'api.internal',
          certData: a.certPem,
          keyData: a.keyPem,
          certFile: files.cert,
          keyFile: files.key,
        }),
        { clock: manual },
      );
      const cn = () =>
        t
          .request({ method: 'GET', path: '/api' })
          .then((r) => r.body.json())
          .catch((e: unknown) => (e instanceof TransportError ? e.code : e));
      try {
        expect(await cn()).toBe('TLSFailed');
        // The CA is rotated to the right one and the certificate renewed: nothing changes before 5 minutes.
        fs.writeFileSync(files.ca, caC.certPem);
        fs.writeFileSync(files.cert, b.certPem);
        fs.writeFileSync(files.key, b.keyPem);
        clock.t += 299_000;
        expect(await cn()).toBe('TLSFailed');
        clock.t += 1_000;
        expect(await cn()).toEqual({ clientCN: 'cert-b' });
        // A failed read keeps what works.
        fs.rmSync(files.cert);
        clock.t += 300_000;
        expect(await cn()).toEqual({ clientCN: 'cert-b' });
      } finally {
        await t.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
