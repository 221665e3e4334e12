import { ApiClient } from '@kubeloop/client';
import {
  DynamicRESTMapper,
  type DynamicRESTMapperOptions,
  type HttpRequest,
  type HttpTransport,
} from '@kubeloop/client/apiutil';
import { Transport } from '@kubeloop/client/transport';
import type { RestConfig } from '@kubeloop/config';

/** One request as the client sent it (method, path with query, headers, body). */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly accept: string | undefined;
  readonly body: string | undefined;
  status?: number;
}

/**
 * A real Transport that records every request the client sends (so counts work against a real cluster
 * too, where envtest's request log does not exist). Not a mock: every request goes to the server.
 */
export function recordingClient(
  config: RestConfig,
  options: { mapper?: DynamicRESTMapperOptions; fieldOwner?: string } = {},
): { client: ApiClient; requests: RecordedRequest[]; writes: () => RecordedRequest[] } {
  const inner = new Transport(config);
  const requests: RecordedRequest[] = [];
  const transport: HttpTransport = {
    async request(req: HttpRequest) {
      const rec: RecordedRequest = {
        method: req.method,
        path: req.path,
        accept: req.headers?.accept,
        body: typeof req.body === 'string' ? req.body : undefined,
      };
      requests.push(rec);
      const res = await inner.request(req);
      rec.status = res.status;
      return res;
    },
    close: () => inner.close(),
  };
  const client = new ApiClient({
    transport,
    restMapper: new DynamicRESTMapper(transport, options.mapper),
    ...(options.fieldOwner ? { fieldOwner: options.fieldOwner } : {}),
  });
  return { client, requests, writes: () => requests.filter((r) => r.method !== 'GET') };
}

/** Discovery requests among the recorded ones (`/api`, `/apis`, `/api/v1`, `/apis/<g>/<v>`, no resource path). */
export function discoveryRequests(requests: readonly RecordedRequest[]): RecordedRequest[] {
  return requests.filter((r) => {
    const p = r.path.split('?')[0]!;
    return (
      r.method === 'GET' &&
      (/^\/apis?$/.test(p) || /^\/api\/[^/]+$/.test(p) || /^\/apis\/[^/]+\/[^/]+$/.test(p))
    );
  });
}
