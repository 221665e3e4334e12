/**
 * Authentication of API requests: bearer tokens from a runtime token table (with expiry and test-only
 * restrictions) and x509 client certificates signed by the server's CA (CN = user, O = groups).
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { parseFieldRequirements } from './field-selector.js';

/** What a token maps to, and what it may touch. */
export interface TokenOptions {
  /** User name (default `envtest-user`). */
  readonly user?: string;
  readonly groups?: readonly string[];
  /** After this instant the token gets 401 Unauthorized. */
  readonly expiresAt?: Date;
  /** Test restriction: only these namespaces (anything else, incl. cluster-scoped requests: 403). */
  readonly namespaces?: readonly string[];
  /**
   * Test restriction: every list/watch must carry these field selector terms (e.g. `metadata.name=x`),
   * and single-object requests must name an object that satisfies them; otherwise 403.
   */
  readonly fieldSelectors?: readonly string[];
}

/** An authenticated user. */
export interface UserInfo {
  readonly name: string;
  readonly groups: readonly string[];
  /** How the user authenticated. */
  readonly method: 'token' | 'certificate' | 'anonymous';
  readonly restrictions?: Pick<TokenOptions, 'namespaces' | 'fieldSelectors'>;
}

/** The token table and certificate authentication of one server. Tokens are never logged. */
export class Authenticator {
  readonly #tokens = new Map<string, TokenOptions>();

  /** Add (or replace) a bearer token. */
  addToken(token: string, options: TokenOptions = {}): void {
    if (!token) throw new TypeError('token must be a non-empty string');
    this.#tokens.set(token, { ...options });
  }

  /** Remove a token; later requests with it get 401. */
  removeToken(token: string): boolean {
    return this.#tokens.delete(token);
  }

  /** Whether a token is currently known (and not expired). */
  hasToken(token: string): boolean {
    const t = this.#tokens.get(token);
    return !!t && (!t.expiresAt || t.expiresAt.getTime() > Date.now());
  }

  /** The user a bearer token stands for; `undefined` when the token is unknown or expired (TokenReview). */
  authenticateToken(token: string): UserInfo | undefined {
    const t = this.#tokens.get(token);
    if (!t) return undefined;
    if (t.expiresAt && t.expiresAt.getTime() <= Date.now()) return undefined;
    const restricted = t.namespaces !== undefined || t.fieldSelectors !== undefined;
    return {
      name: t.user ?? 'envtest-user',
      groups: [...(t.groups ?? []), 'system:authenticated'],
      method: 'token',
      ...(restricted ? { restrictions: { namespaces: t.namespaces, fieldSelectors: t.fieldSelectors } } : {}),
    };
  }

  /**
   * Authenticate a request: a bearer token first, then a verified client certificate.
   * Returns undefined when neither is present or valid.
   */
  authenticate(req: IncomingMessage): UserInfo | undefined {
    const h = req.headers.authorization;
    if (typeof h === 'string' && h.length > 0) {
      const m = /^Bearer\s+(.+)$/i.exec(h.trim());
      if (!m) return undefined;
      return this.authenticateToken(m[1]!.trim());
    }
    const sock = req.socket as TLSSocket;
    if (typeof sock.getPeerCertificate === 'function' && sock.authorized) {
      const peer = sock.getPeerCertificate();
      if (peer?.subject) {
        const cn = peer.subject.CN;
        const o = peer.subject.O;
        const user = Array.isArray(cn) ? cn[0] : cn;
        if (user) {
          const groups = o === undefined ? [] : Array.isArray(o) ? o : [o];
          return { name: user, groups: [...groups, 'system:authenticated'], method: 'certificate' };
        }
      }
    }
    return undefined;
  }
}

/** Does a restricted user's list/watch carry every required field-selector term? */
export function fieldSelectorsSatisfied(required: readonly string[], given: string | null): boolean {
  const have = parseFieldRequirements(given).map((r) => `${r.field}${r.op}${r.value}`);
  return required.every((req) => {
    const [r] = parseFieldRequirements(req);
    return r ? have.includes(`${r.field}${r.op}${r.value}`) : true;
  });
}

/** For a named object: does its name satisfy `metadata.name=` terms of the restriction? */
export function nameSatisfies(required: readonly string[], name: string): boolean {
  return required.every((req) => {
    const [r] = parseFieldRequirements(req);
    if (r?.field !== 'metadata.name') return true;
    return r.op === '=' ? r.value === name : r.value !== name;
  });
}
