import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client, ObjectOf } from '@kubeloop/client';
import { SubjectAccessReview, TokenReview } from '@kubeloop/client/kinds';
import { type Clock, realClock } from '@kubeloop/core';
import { discardLogger, type Logger } from '../logger.js';

/** Decides whether a request may reach its handler: `true` lets it through; `false` means it was answered. */
export type RequestFilter = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

function deny(res: ServerResponse, status: 401 | 403 | 500, text: string): false {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(`${text}\n`);
  return false;
}

/** How long review answers are reused, in ms (apiserver's delegating authenticator and authorizer defaults). */
export interface ReviewCacheOptions {
  /** An authenticated token's user. @defaultValue 120000 (2 min, `DelegatingAuthenticatorConfig.CacheTTL`) */
  readonly authenticationTtlMs?: number;
  /** An allowed decision. @defaultValue 300000 (5 min, `DelegatingAuthorizerConfig.AllowCacheTTL`) */
  readonly allowTtlMs?: number;
  /** A denied decision. @defaultValue 30000 (30 s, `DelegatingAuthorizerConfig.DenyCacheTTL`) */
  readonly denyTtlMs?: number;
  /** Answers kept at most per cache; the oldest goes first. @defaultValue 1024 */
  readonly maxEntries?: number;
  readonly clock?: Clock;
}

type User = { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };

/** A bounded map whose entries expire (insertion order is age order, so the first key is the oldest). */
class TtlCache<V> {
  readonly #m = new Map<string, { value: V; until: number }>();
  constructor(
    private readonly clock: Clock,
    private readonly max: number,
  ) {}
  get(key: string): V | undefined {
    const e = this.#m.get(key);
    if (e === undefined) return undefined;
    if (this.clock.now() < e.until) return e.value;
    this.#m.delete(key);
    return undefined;
  }
  set(key: string, value: V, ttlMs: number): void {
    if (!(ttlMs > 0)) return;
    this.#m.delete(key);
    this.#m.set(key, { value, until: this.clock.now() + ttlMs });
    if (this.#m.size > this.max) this.#m.delete(this.#m.keys().next().value as string);
  }
}

/**
 * controller-runtime's `filters.WithAuthenticationAndAuthorization` for the metrics server: the request's bearer
 * token is checked with a `TokenReview` (unknown, missing or unauthenticated → 401 Unauthorized), then the user
 * it names with a `SubjectAccessReview` of the non-resource URL (`path`, verb = the lower-cased HTTP method, as
 * kube-rbac-proxy and controller-runtime ask): not allowed → 403 Forbidden. Both reviews are sent with `client`
 * (the manager's own credentials, which need `create` on `tokenreviews` and `subjectaccessreviews`, as
 * controller-runtime's `metrics-auth-role` grants); a review that fails is a 500 and is not cached. As the
 * apiserver's delegating authenticator and authorizer that controller-runtime builds the filter on, answers are
 * reused for a while ({@link ReviewCacheOptions}: an authenticated user 2 min, keyed by the token's SHA-256; an
 * allow 5 min, a deny 30 s), so a scraper every 15 s costs no reviews between them. The token is never logged
 * or kept.
 */
export function withAuthenticationAndAuthorization(
  client: Client,
  logger: Logger = discardLogger,
  cacheOptions: ReviewCacheOptions = {},
): RequestFilter {
  const clock = cacheOptions.clock ?? realClock;
  const max = cacheOptions.maxEntries ?? 1024;
  const authnTtl = cacheOptions.authenticationTtlMs ?? 120_000;
  const allowTtl = cacheOptions.allowTtlMs ?? 300_000;
  const denyTtl = cacheOptions.denyTtlMs ?? 30_000;
  const users = new TtlCache<User>(clock, max);
  const decisions = new TtlCache<boolean>(clock, max);
  return async (req, res) => {
    const h = req.headers.authorization;
    const m = typeof h === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
    if (!m) return deny(res, 401, 'Unauthorized');
    const path = new URL(req.url ?? '/', 'http://metrics').pathname;
    const verb = (req.method ?? 'GET').toLowerCase();
    try {
      const tokenKey = createHash('sha256').update(m[1]!).digest('hex');
      let user = users.get(tokenKey);
      if (user === undefined) {
        const tr = await client.create<ObjectOf<typeof TokenReview>>(TokenReview, {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenReview',
          spec: { token: m[1]! },
        });
        // Only an authenticated answer is kept: an unknown token is asked about again (apiserver caches both,
        // but a token the server learns later must not wait out a cached refusal).
        if (!tr.status?.authenticated || !tr.status.user?.username) return deny(res, 401, 'Unauthorized');
        user = tr.status.user;
        users.set(tokenKey, user, authnTtl);
      }
      const decisionKey = JSON.stringify([user.username, user.uid, user.groups, user.extra, path, verb]);
      let allowed = decisions.get(decisionKey);
      if (allowed === undefined) {
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
        allowed = sar.status?.allowed === true;
        decisions.set(decisionKey, allowed, allowed ? allowTtl : denyTtl);
      }
      if (!allowed) {
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
