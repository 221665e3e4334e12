import { request } from 'node:https';
import { createCA, issueServing, type PemPair } from '../../src/certs/pki.js';

const DAY = 24 * 3600 * 1000;

/** A CA and a serving pair for 127.0.0.1 / localhost. */
export async function loopbackPki(): Promise<{ ca: PemPair; serving: PemPair }> {
  const now = Date.now();
  const ca = await createCA(
    `test-ca-${Math.random().toString(36).slice(2)}`,
    new Date(now - DAY),
    new Date(now + DAY),
  );
  const serving = await issueServing(
    ca,
    ['127.0.0.1', 'localhost'],
    new Date(now - DAY),
    new Date(now + DAY),
  );
  return { ca, serving };
}

/** A static certificate source over a pair. */
export function staticSource(pair: PemPair) {
  return { start: async () => {}, current: () => pair, onChange: () => () => {} };
}

export interface Reply {
  status: number;
  body: unknown;
  text: string;
  peerCertPem?: string;
}

/** POSTs `body` to `https://127.0.0.1:port/path`, trusting `caPem`. */
export function post(
  port: number,
  path: string,
  body: string | Buffer,
  caPem: string | string[],
  headers: Record<string, string> = { 'content-type': 'application/json' },
  method = 'POST',
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method, ca: caPem, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          const cert = (res.socket as import('node:tls').TLSSocket).getPeerCertificate?.();
          resolve({
            status: res.statusCode ?? 0,
            body: parsed,
            text,
            peerCertPem: cert?.raw?.toString('base64'),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** An admission.k8s.io/v1 review of a Widget. */
export function admissionReview(
  request: Record<string, unknown>,
  apiVersion = 'admission.k8s.io/v1',
): Record<string, unknown> {
  return {
    apiVersion,
    kind: 'AdmissionReview',
    request: {
      uid: 'uid-1',
      kind: { group: 'example.com', version: 'v1', kind: 'Widget' },
      resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
      operation: 'CREATE',
      userInfo: { username: 'alice', groups: ['system:authenticated'] },
      namespace: 'default',
      name: 'w1',
      ...request,
    },
  };
}
