/**
 * `newClient`: a live client for a `RestConfig` (controller-runtime `client.New`).
 */
import type { RestConfig } from '@kubeloop/config';
import { ApiClient, type ClientOptions } from './client.js';
import type { RESTMapper } from './rest-mapper.js';
import { Transport, type TransportOptions } from './transport/index.js';

/** Options of {@link newClient}. */
export interface NewClientOptions {
  /** Transport options (rate limiter, retries, credentials). */
  readonly transport?: TransportOptions;
  readonly restMapper?: RESTMapper;
  readonly fieldOwner?: string;
  /** Bound on one watch event, in bytes (see {@link ClientOptions.maxWatchEventBytes}). @defaultValue 16 MiB */
  readonly maxWatchEventBytes?: number;
  /** How list replies are decoded (see {@link ClientOptions.listDecoding}). @defaultValue 'stream' */
  readonly listDecoding?: 'stream' | 'whole';
}

/**
 * A live client for `config`: one pooled {@link Transport} (throttling, retries, credential refresh) and a
 * lazy `DynamicRESTMapper` (controller-runtime `client.New(config, options)`). Call `close()` when done.
 */
export function newClient(config: RestConfig, options: NewClientOptions = {}): ApiClient {
  const transport = new Transport(config, options.transport);
  return new ApiClient({
    transport,
    ...(options.restMapper ? { restMapper: options.restMapper } : {}),
    ...(options.fieldOwner ? { fieldOwner: options.fieldOwner } : {}),
    ...(options.maxWatchEventBytes !== undefined ? { maxWatchEventBytes: options.maxWatchEventBytes } : {}),
    ...(options.listDecoding !== undefined ? { listDecoding: options.listDecoding } : {}),
  });
}
