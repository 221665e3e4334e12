/**
 * The non-resource endpoints: `/version`, `/healthz` `/livez` `/readyz` (with `?verbose`), discovery (legacy and
 * aggregated, negotiated by Accept) and OpenAPI v3 (protocol §0, §2).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  type ServedGroups,
} from './discovery.js';
import { pathNotFound } from './errors.js';
import { negotiate, sendBody, sendText } from './http.js';
import { openApiDocument, openApiIndex } from './openapi.js';
import { goRestfulServesGroup } from './resource-handler.js';

/** What the non-resource endpoints read from the server. */
export interface NonResourceEnv {
  served(): ServedGroups;
  readonly port: number;
  readonly gitVersion?: string;
  readonly aggregatedDiscovery: boolean;
  openApiHash(gv: string): string;
}

const HEALTH_CHECKS = [
  'ping',
  'log',
  'etcd',
  'poststarthook/start-apiextensions-controllers',
  'poststarthook/crd-informer-synced',
];

/**
 * Answer one non-resource request.
 * @throws ApiStatusError 404 (a Status) for unknown paths under `/api` and a built-in group's `/apis/<group>`;
 * other unknown paths (an unknown group, a CRD group's unserved version) get the plain-text 404.
 */
export function serveNonResource(
  env: NonResourceEnv,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  q: URLSearchParams,
): void {
  const accept = String(req.headers.accept ?? '');
  const method = (req.method ?? 'GET').toUpperCase();
  if (method !== 'GET' && method !== 'HEAD') {
    sendText(res, 404, '404 page not found\n');
    return;
  }
  if (path === '/version') {
    const [, major, minor] = /^v(\d+)\.(\d+)/.exec(env.gitVersion ?? 'v1.32.4') ?? [];
    sendBody(res, 200, {
      major: major ?? '1',
      minor: minor ?? '32',
      gitVersion: env.gitVersion ?? 'v1.32.4-kubeloop',
      gitCommit: '0000000000000000000000000000000000000000',
      gitTreeState: 'clean',
      buildDate: '2026-01-01T00:00:00Z',
      goVersion: 'go1.23.5',
      compiler: 'gc',
      platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
    });
    return;
  }
  if (
    path === '/healthz' ||
    path === '/livez' ||
    path === '/readyz' ||
    /^\/(healthz|livez|readyz)\//.test(path)
  ) {
    if (q.has('verbose')) {
      const root = path.split('/')[1];
      sendText(res, 200, `${HEALTH_CHECKS.map((c) => `[+]${c} ok`).join('\n')}\n${root} check passed\n`);
    } else sendText(res, 200, 'ok');
    return;
  }
  const served = env.served();
  const aggregated = { aggregated: env.aggregatedDiscovery };
  if (path === '/api' || path === '/apis') {
    const fmt = negotiate(accept, aggregated);
    const core = path === '/api';
    if (fmt.kind === 'aggregated') {
      sendBody(
        res,
        200,
        aggregatedDiscovery(served, core, fmt.version),
        { kind: 'json' },
        { Vary: 'Accept' },
        `application/json;g=apidiscovery.k8s.io;v=${fmt.version};as=APIGroupDiscoveryList`,
      );
      return;
    }
    sendBody(res, 200, core ? apiVersions(`127.0.0.1:${env.port}`) : apiGroupList(served), fmt, {
      Vary: 'Accept',
    });
    return;
  }
  const segs = path.split('/').filter(Boolean);
  if (segs[0] === 'api' && segs.length === 2) {
    const doc = apiResourceList(served, '', segs[1]!);
    if (doc) {
      sendBody(res, 200, doc, negotiate(accept));
      return;
    }
  }
  if (segs[0] === 'apis' && segs.length === 2) {
    const doc = apiGroup(served, segs[1]!);
    if (doc) {
      sendBody(res, 200, doc, negotiate(accept));
      return;
    }
  }
  if (segs[0] === 'apis' && segs.length === 3) {
    const doc = apiResourceList(served, segs[1]!, segs[2]!);
    if (doc) {
      sendBody(res, 200, doc, negotiate(accept));
      return;
    }
  }
  if (segs[0] === 'openapi' && segs[1] === 'v3') {
    const hash = (gv: string) => env.openApiHash(gv);
    if (segs.length === 2) {
      sendBody(res, 200, openApiIndex(served, hash), { kind: 'json' }, {}, 'text/plain; charset=utf-8');
      return;
    }
    const gv = segs.slice(2).join('/');
    const doc = openApiDocument(served, gv);
    if (doc) {
      sendBody(res, 200, doc, { kind: 'json' }, { Etag: `"${hash(gv)}"` });
      return;
    }
  }
  // under /api and a built-in group go-restful answers a NotFound Status; an unknown group, or a CRD group's
  // unserved version, reaches apiextensions' discovery handlers, which hand it to the plain-text not-found handler
  if (
    (segs[0] === 'api' && segs.length >= 2) ||
    (segs[0] === 'apis' && segs.length >= 2 && goRestfulServesGroup(segs[1]!))
  )
    throw pathNotFound();
  sendText(res, 404, '404 page not found\n');
}
