/**
 * serviceaccounts/token (TokenREST in registry/core/serviceaccount/storage/token.go): mints a token for a
 * ServiceAccount that the server then authenticates as `system:serviceaccount:<namespace>:<name>`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { badRequest, invalid } from '../errors.js';
import { contentTypeOf, decodeBody, negotiate, readBody, sendBody } from '../http.js';
import type { ResourceRequest } from './context.js';
import { dryRunOf, isObj } from './context.js';

const MIN_EXPIRATION_S = 600;
const MAX_EXPIRATION_S = 2 ** 32;
const DEFAULT_EXPIRATION_S = 3600;

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/**
 * POST serviceaccounts/{name}/token with an authentication.k8s.io/v1 TokenRequest, as TokenREST.Create: the
 * ServiceAccount must exist (404); `spec.expirationSeconds` defaults to 3600 and must be at least 600 and at
 * most 2^32 (422, ValidateTokenRequest); `spec.audiences` defaults to the server's (its issuer, the server URL).
 * Answers 201 with the TokenRequest: `metadata` the ServiceAccount's name and namespace, the spec as defaulted,
 * `status.token` (a JWT-shaped bearer token; its signature is random, nobody can verify it) and
 * `status.expirationTimestamp` (RFC 3339, seconds). The token authenticates as
 * `system:serviceaccount:<ns>:<name>` with groups `system:serviceaccounts`, `system:serviceaccounts:<ns>` and
 * `system:authenticated` until it expires (envtest has no RBAC: it may do anything). `dryRun` mints nothing
 * usable.
 */
export async function handleServiceAccountToken(r: ResourceRequest): Promise<void> {
  const { rt, ns, name, req, res, q } = r;
  const { registry } = r.env;
  const fmt = negotiate(String(req.headers.accept ?? ''), {});
  const raw = await readBody(req);
  const body = raw.length ? decodeBody(raw, contentTypeOf(req) || 'application/json', 'TokenRequest') : {};
  if (!isObj(body)) throw badRequest('the body of the request was in an unknown format');
  const sa = registry.view(rt, registry.get(rt, ns, name!));
  const spec = isObj(body.spec) ? body.spec : {};
  const expirationSeconds =
    typeof spec.expirationSeconds === 'number' ? spec.expirationSeconds : DEFAULT_EXPIRATION_S;
  const issuer = r.env.tokens?.issuer ?? 'https://kubernetes.default.svc.cluster.local';
  const audiences =
    Array.isArray(spec.audiences) && spec.audiences.length > 0 ? spec.audiences.map(String) : [issuer];
  if (expirationSeconds < MIN_EXPIRATION_S || expirationSeconds > MAX_EXPIRATION_S)
    throw invalid('TokenRequest', 'authentication.k8s.io', '', [
      {
        type: 'FieldValueInvalid',
        field: 'spec.expirationSeconds',
        detail: `Invalid value: ${expirationSeconds}: ${
          expirationSeconds < MIN_EXPIRATION_S
            ? 'may not specify a duration less than 10 minutes'
            : 'may not specify a duration larger than 2^32 seconds'
        }`,
      },
    ]);
  const nowS = Math.floor(Date.now() / 1000);
  const expS = nowS + expirationSeconds;
  const meta = isObj(sa.metadata) ? sa.metadata : {};
  const claims = {
    aud: audiences,
    exp: expS,
    iat: nowS,
    iss: issuer,
    jti: randomUUID(),
    'kubernetes.io': { namespace: ns, serviceaccount: { name, uid: meta.uid } },
    nbf: nowS,
    sub: `system:serviceaccount:${ns}:${name}`,
  };
  const token = `${b64url({ alg: 'RS256', kid: 'envtest' })}.${b64url(claims)}.${randomBytes(32).toString('base64url')}`;
  if (!dryRunOf(q))
    r.env.tokens?.addToken(token, {
      user: `system:serviceaccount:${ns}:${name}`,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
      expiresAt: new Date(expS * 1000),
    });
  sendBody(
    res,
    201,
    {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name, namespace: ns, creationTimestamp: null },
      spec: {
        audiences,
        expirationSeconds,
        boundObjectRef: isObj(spec.boundObjectRef) ? spec.boundObjectRef : null,
      },
      status: { token, expirationTimestamp: new Date(expS * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') },
    },
    fmt,
  );
}
