/**
 * A tiny HTTPS JSON client used by Environment to install CRDs and probe health in every mode (in-process,
 * existing cluster, real binaries). Deliberately independent of @kubeloop/client (envtest must not share
 * code with the stack it tests).
 */

import { readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { RestConfig } from '@kubeloop/config';

export interface RestResponse {
  readonly status: number;
  readonly body: unknown;
  readonly text: string;
}

/** One JSON request against the server of `config`. `timeoutMs` default 30000. */
export async function restRequest(
  config: RestConfig,
  method: string,
  path: string,
  body?: unknown,
  options: { contentType?: string; timeoutMs?: number } = {},
): Promise<RestResponse> {
  const url = new URL(path, config.host.endsWith('/') ? config.host : `${config.host}/`);
  const tls = config.tlsClientConfig;
  let token = config.bearerToken;
  if (!token && config.bearerTokenFile) token = (await readFile(config.bearerTokenFile, 'utf8')).trim();
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': 'kubeloop-envtest' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (payload !== undefined) {
    headers['Content-Type'] = options.contentType ?? 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(payload));
  }
  const isHttps = url.protocol === 'https:';
  const doRequest = isHttps ? httpsRequest : httpRequest;
  return new Promise<RestResponse>((resolve, reject) => {
    const req = doRequest(
      url,
      {
        method,
        headers,
        ...(isHttps
          ? {
              ca: tls.caData,
              cert: tls.certData,
              key: tls.keyData,
              servername: tls.serverName,
              rejectUnauthorized: !tls.insecure,
            }
          : {}),
        timeout: options.timeoutMs ?? 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, text });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`request to ${url.pathname} timed out`)));
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}
