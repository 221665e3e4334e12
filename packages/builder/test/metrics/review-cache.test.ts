import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@kubeloop/client';
import { FakeClock } from '@kubeloop/core/testing';
import { describe, expect, it } from 'vitest';
import { withAuthenticationAndAuthorization } from '../../src/metrics/filters.js';

// The metrics filter reuses review answers as the apiserver's delegating authenticator/authorizer do
// (authenticated user 2 min, allow 5 min, deny 30 s), so a scraper does not cost two reviews per scrape.

function reviewer(allowed: (user: string) => boolean) {
  const sent: string[] = [];
  const client = {
    create: async (kind: { kind: string }, body: { spec: Record<string, unknown> }) => {
      sent.push(kind.kind);
      if (kind.kind === 'TokenReview') {
        const token = body.spec.token as string;
        return token.startsWith('good-')
          ? { status: { authenticated: true, user: { username: token.slice(5), groups: ['g'] } } }
          : { status: { authenticated: false } };
      }
      return { status: { allowed: allowed(body.spec.user as string) } };
    },
  } as unknown as Client;
  return { client, sent };
}

async function ask(filter: ReturnType<typeof withAuthenticationAndAuthorization>, token?: string) {
  let status = 200;
  const req = {
    headers: token ? { authorization: `Bearer ${token}` } : {},
    url: '/metrics',
    method: 'GET',
  } as unknown as IncomingMessage;
  const res = {
    writeHead: (s: number) => {
      status = s;
    },
    end: () => {},
  } as unknown as ServerResponse;
  const passed = await filter(req, res);
  return passed ? 200 : status;
}

describe('metrics filter: review answers are cached briefly', () => {
  it('an allowed scraper costs one TokenReview and one SubjectAccessReview until the TTLs pass', async () => {
    const clock = new FakeClock();
    const { client, sent } = reviewer(() => true);
    const f = withAuthenticationAndAuthorization(client, undefined, { clock });
    for (let i = 0; i < 5; i++) expect(await ask(f, 'good-prom')).toBe(200);
    expect(sent).toEqual(['TokenReview', 'SubjectAccessReview']);
    clock.step(120_000); // the user expires; the decision (5 min) does not
    expect(await ask(f, 'good-prom')).toBe(200);
    expect(sent).toEqual(['TokenReview', 'SubjectAccessReview', 'TokenReview']);
    clock.step(180_000);
    expect(await ask(f, 'good-prom')).toBe(200);
    expect(sent.filter((k) => k === 'SubjectAccessReview')).toHaveLength(2);
  });

  it('a deny is kept 30 s; an unauthenticated token is never cached; no token is 401 without a review', async () => {
    const clock = new FakeClock();
    let allow = false;
    const { client, sent } = reviewer(() => allow);
    const f = withAuthenticationAndAuthorization(client, undefined, { clock });
    expect(await ask(f)).toBe(401);
    expect(sent).toEqual([]);
    expect(await ask(f, 'bad')).toBe(401);
    expect(await ask(f, 'bad')).toBe(401);
    expect(sent).toEqual(['TokenReview', 'TokenReview']);
    expect(await ask(f, 'good-eve')).toBe(403);
    allow = true; // RBAC granted: the cached deny holds for 30 s, then the new answer is asked for
    expect(await ask(f, 'good-eve')).toBe(403);
    clock.step(30_000);
    expect(await ask(f, 'good-eve')).toBe(200);
  });
});
