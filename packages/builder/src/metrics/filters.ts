import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client, ObjectOf } from '@kubeloop/client';
import { SubjectAccessReview, TokenReview } from '@kubeloop/client/kinds';
import { discardLogger, type Logger } from '../logger.js';

/** Decides whether a request may reach its handler: `true` lets it through; `false` means it was answered. */
export type RequestFilter = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

function deny(res: ServerResponse, status: 401 | 403 | 500, text: string): false {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(`${text}\n`);
  return false;
}

/**
 * controller-runtime's `filters.WithAuthenticationAndAuthorization` for the metrics server: the request's bearer
 * token is checked with a `TokenReview` (unknown, missing or unauthenticated → 401 Unauthorized), then the user
 * it names with a `SubjectAccessReview` of the non-resource URL (`path`, verb = the lower-cased HTTP method, as
 * kube-rbac-proxy and controller-runtime ask): not allowed → 403 Forbidden. Both reviews are sent with `client`
 * (the manager's own credentials, which need `create` on `tokenreviews` and `subjectaccessreviews`, as
 * controller-runtime's `metrics-auth-role` grants); a review that fails is a 500. The token is never logged.
 */
export function withAuthenticationAndAuthorization(
  client: Client,
  logger: Logger = discardLogger,
): RequestFilter {
  return async (req, res) => {
    const h = req.headers.authorization;
    const m = typeof h === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
    if (!m) return deny(res, 401, 'Unauthorized');
    const path = new URL(req.url ?? '/', 'http://metrics').pathname;
    const verb = (req.method ?? 'GET').toLowerCase();
    try {
      const tr = await client.create<ObjectOf<typeof TokenReview>>(TokenReview, {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token: m[1]! },
      });
      const user = tr.status?.user;
      if (!tr.status?.authenticated || !user?.username) return deny(res, 401, 'Unauthorized');
      const sar = await client.create<ObjectOf<typeof SubjectAccessReview>>(SubjectAccessReview, {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username,
          ...(user.groups ? { groups: user.groups } : {}),
          ...(user.uid ? { uid: user.uid } : {}),
          ...(user.extra ? { extra: user.extra } : {}),
          nonResourceAttributes: { path, verb },
        },
      });
      if (!sar.status?.allowed) {
        logger.debug({ user: user.username, path, verb }, 'metrics request forbidden');
        return deny(res, 403, `Forbidden (user=${user.username}, verb=${verb}, resource=, subresource=)`);
      }
      return true;
    } catch (err) {
      logger.error({ err, path }, 'authenticating or authorizing a metrics request failed');
      return deny(res, 500, 'Internal Server Error');
    }
  };
}
