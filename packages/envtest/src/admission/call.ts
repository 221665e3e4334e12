/**
 * One call of a webhook as kube-apiserver's webhook client makes it: POST of a review to the client config's
 * URL (with `?timeout=<timeoutSeconds>s`), trusting only the `caBundle`, within `timeoutSeconds`. Every
 * failure is a {@link WebhookCallError} whose message reads like the API server's.
 */
import { request } from 'node:https';
import type { WebhookFault } from './faults.js';

/** A failed call (connection, timeout, HTTP status, unreadable reply): subject to `failurePolicy`. */
export class WebhookCallError extends Error {
  override readonly name = 'WebhookCallError';
}

/** Where a webhook is reached: a URL, or a Service resolved by the test to a base URL. */
export interface ClientConfig {
  readonly url?: string;
  readonly service?: {
    readonly namespace: string;
    readonly name: string;
    readonly path?: string;
    readonly port?: number;
  };
  readonly caBundle?: string;
}

/** Resolves a Service of a client config to a base URL such as `https://127.0.0.1:9443`. */
export type ServiceResolver = (service: {
  namespace: string;
  name: string;
  port: number;
}) => string | undefined;

/** The URL a client config names, or an error message. */
export function webhookURL(
  cc: ClientConfig,
  resolve: ServiceResolver | undefined,
): string | WebhookCallError {
  if (cc.url) return cc.url;
  if (cc.service) {
    const port = cc.service.port ?? 443;
    const base = resolve?.({ namespace: cc.service.namespace, name: cc.service.name, port });
    if (!base)
      return new WebhookCallError(
        `failed to call webhook: service "${cc.service.name}" in namespace "${cc.service.namespace}" cannot be resolved: pass webhooks.resolveService to the envtest server`,
      );
    return `${base.replace(/\/+$/, '')}${cc.service.path ?? ''}`;
  }
  return new WebhookCallError('failed to call webhook: clientConfig has neither url nor service');
}

/**
 * POSTs `review` to `url`; resolves the parsed JSON reply of a 200. `timeoutMs` bounds the whole call.
 * @throws WebhookCallError on any failure.
 */
export async function callWebhook(
  url: string,
  caBundle: string | undefined,
  review: unknown,
  timeoutSeconds: number,
  fault: WebhookFault | undefined,
): Promise<unknown> {
  const target = new URL(url);
  target.searchParams.set('timeout', `${timeoutSeconds}s`);
  const post = `Post "${target.toString()}"`;
  if (fault?.type === 'refusing')
    throw new WebhookCallError(
      `failed to call webhook: ${post}: dial tcp ${target.host}: connect: connection refused`,
    );
  if (fault?.type === 'failing') {
    const status = fault.status ?? 500;
    throw new WebhookCallError(
      `failed to call webhook: the server responded with the status code ${status} but did not return more information`,
    );
  }
  const deadline = Date.now() + timeoutSeconds * 1000;
  if (fault?.type === 'slow')
    await new Promise((r) => setTimeout(r, Math.min(fault.delayMs, timeoutSeconds * 1000)));
  const remaining = deadline - Date.now();
  if (remaining <= 0)
    throw new WebhookCallError(`failed to call webhook: ${post}: context deadline exceeded`);
  if (target.protocol !== 'https:')
    throw new WebhookCallError(`failed to call webhook: ${post}: webhook URLs must use https`);
  const body = JSON.stringify(review);
  const ca = caBundle ? Buffer.from(caBundle, 'base64').toString('utf8') : undefined;
  return new Promise((resolve, reject) => {
    const req = request(
      target,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': Buffer.byteLength(body),
        },
        ...(ca
          ? { ca: ca.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [ca] }
          : {}),
        agent: false,
        timeout: remaining,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e) => reject(new WebhookCallError(`failed to call webhook: ${post}: ${e.message}`)));
        res.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) {
            reject(
              new WebhookCallError(
                `failed to call webhook: the server responded with the status code ${res.statusCode}: ${text.slice(0, 200)}`,
              ),
            );
            return;
          }
          try {
            resolve(JSON.parse(text));
          } catch (e) {
            reject(new WebhookCallError(`received invalid webhook response: ${(e as Error).message}`));
          }
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy(new Error('context deadline exceeded'));
    }, remaining);
    req.on('timeout', () => req.destroy(new Error('context deadline exceeded')));
    req.on('error', (e) => {
      clearTimeout(timer);
      const code = (e as NodeJS.ErrnoException).code;
      const why =
        code === 'ECONNREFUSED' ? `dial tcp ${target.host}: connect: connection refused` : e.message;
      reject(new WebhookCallError(`failed to call webhook: ${post}: ${why}`));
    });
    req.end(body);
  });
}
