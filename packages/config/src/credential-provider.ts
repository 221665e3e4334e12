import fs from 'node:fs/promises';
import { LRUCache } from 'lru-cache';
import { CredentialError } from './errors.js';
import { ExecCredentialSource } from './exec-credential.js';
import type {
  CredentialProvider,
  ImpersonationConfig,
  RequestCredentials,
  RestConfig,
} from './rest-config.js';

/** The user shape client-node's OIDC authenticator reads (its `User`, the fields we fill). */
interface OidcUser {
  readonly name: string;
  readonly authProvider: { name: string; config: Record<string, string> };
}

/** What we use of client-node's `OpenIDConnectAuth`. */
interface OidcAuthenticator {
  applyAuthentication(user: OidcUser, opts: { headers: Record<string, string> }): Promise<void>;
}

/** The optional peer that serves the `oidc` auth provider. */
const OIDC_PACKAGE = '@kubernetes/client-node';

/**
 * client-node's OIDC authenticator, imported on first use: it (and openid-client) costs tens of MB and
 * seconds of start-up that every process without an oidc user would otherwise pay, and it is an optional
 * peer dependency, so it may not be installed at all.
 * @throws {CredentialError} `AuthProviderFailed` naming the package to install when it is missing.
 */
async function loadOidcAuthenticator(): Promise<OidcAuthenticator> {
  const specifier = `${OIDC_PACKAGE}/dist/oidc_auth.js`;
  let mod: { OpenIDConnectAuth: new () => OidcAuthenticator };
  try {
    mod = (await import(specifier)) as typeof mod;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new CredentialError(
        'AuthProviderFailed',
        `the oidc auth provider needs the optional package ${OIDC_PACKAGE} (1.x): npm install ${OIDC_PACKAGE}@1`,
        { cause: e },
      );
    }
    throw e;
  }
  return new mod.OpenIDConnectAuth();
}

/** Options of {@link credentialProviderFor}. */
export interface CredentialProviderOptions {
  /** Milliseconds clock. Default `Date.now`. */
  readonly now?: () => number;
  /** How long a token read from `bearerTokenFile` is used before the file is read again (ms). Default 60 000. */
  readonly tokenFileRefreshMs?: number;
  /** Environment the exec plugin inherits. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Whether stdin is an interactive terminal (exec `interactiveMode`). Default `process.stdin.isTTY`. */
  readonly stdinIsTerminal?: boolean;
  /** Bound of one exec plugin run in milliseconds (see `ExecCredentialSourceOptions.timeoutMs`). Default 60 000. */
  readonly execTimeoutMs?: number;
}

/**
 * The `Impersonate-*` headers for a config (client-go `transport.NewImpersonatingRoundTripper`): user and
 * uid as single headers, every group and every extra value as a header of its own.
 */
export function impersonationHeaders(imp: ImpersonationConfig | undefined): {
  headers: Record<string, string>;
  multiHeaders: Record<string, string[]>;
} {
  const headers: Record<string, string> = {};
  const multiHeaders: Record<string, string[]> = {};
  if (!imp?.userName) return { headers, multiHeaders };
  headers['Impersonate-User'] = imp.userName;
  if (imp.uid) headers['Impersonate-Uid'] = imp.uid;
  if (imp.groups && imp.groups.length > 0) multiHeaders['Impersonate-Group'] = [...imp.groups];
  for (const [k, values] of Object.entries(imp.extra ?? {})) {
    if (values.length > 0) multiHeaders[`Impersonate-Extra-${encodeURIComponent(k)}`] = [...values];
  }
  return { headers, multiHeaders };
}

/**
 * A token file read at most once per refresh period, re-read at once after {@link reset} (a 401), keeping
 * the last good token when a read fails (client-go `transport.NewCachedFileTokenSource`).
 */
export class CachedFileToken {
  private token: string | undefined;
  private readAt = Number.NEGATIVE_INFINITY;
  private inflight: Promise<string> | undefined;

  constructor(
    readonly file: string,
    private readonly refreshMs: number,
    private readonly now: () => number,
  ) {}

  /** The current token. @throws {CredentialError} `TokenFileUnreadable` when no good token was ever read. */
  get(): Promise<string> {
    if (this.token !== undefined && this.now() - this.readAt < this.refreshMs)
      return Promise.resolve(this.token);
    this.inflight ??= this.read().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  /** Forget the cached token so the next {@link get} reads the file. */
  reset(): void {
    this.readAt = Number.NEGATIVE_INFINITY;
  }

  private async read(): Promise<string> {
    try {
      const text = (await fs.readFile(this.file, 'utf8')).trim();
      if (text === '') throw Object.assign(new Error('empty'), { code: 'EMPTY' });
      this.token = text;
      this.readAt = this.now();
      return text;
    } catch (e) {
      if (this.token !== undefined) return this.token;
      throw new CredentialError(
        'TokenFileUnreadable',
        `cannot read token file ${this.file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  }
}

/**
 * Exec authenticators shared by every provider built (with default options) for the same plugin and
 * cluster, as client-go caches them by config: many clients of one config run the plugin once. Bounded:
 * a process that builds configs for many clusters keeps the {@link MAX_SHARED_EXEC_SOURCES} most recent.
 */
const MAX_SHARED_EXEC_SOURCES = 64;
const execSources = new LRUCache<string, ExecCredentialSource>({ max: MAX_SHARED_EXEC_SOURCES });

function sharedExecSource(config: RestConfig): ExecCredentialSource {
  const exec = config.execProvider as NonNullable<RestConfig['execProvider']>;
  const t = config.tlsClientConfig;
  const key = JSON.stringify([
    exec,
    config.host,
    t.caData ?? '',
    t.serverName ?? '',
    t.insecure ?? false,
    config.proxyUrl ?? '',
  ]);
  let source = execSources.get(key);
  if (!source) {
    source = new ExecCredentialSource(exec, config);
    execSources.set(key, source);
  }
  return source;
}

class ConfigCredentialProvider implements CredentialProvider {
  private readonly staticHeaders: Record<string, string>;
  private readonly multiHeaders: Record<string, string[]>;
  private readonly tokenFile: CachedFileToken | undefined;
  private readonly exec: ExecCredentialSource | undefined;
  private readonly oidc:
    | { auth: Promise<OidcAuthenticator>; user: OidcUser; inflight?: Promise<string | undefined> }
    | undefined;

  constructor(
    private readonly config: RestConfig,
    options: CredentialProviderOptions,
  ) {
    const now = options.now ?? Date.now;
    const imp = impersonationHeaders(config.impersonate);
    this.staticHeaders = imp.headers;
    this.multiHeaders = imp.multiHeaders;
    const isHttps = !config.host.startsWith('http://');
    if (isHttps && config.bearerTokenFile) {
      this.tokenFile = new CachedFileToken(config.bearerTokenFile, options.tokenFileRefreshMs ?? 60_000, now);
    }
    if (isHttps && config.authProvider?.name === 'oidc') {
      // client-node's authenticator mutates the user's auth-provider config when it refreshes: give it a copy.
      const user: OidcUser = {
        name: 'oidc',
        authProvider: { name: 'oidc', config: { ...config.authProvider.config } },
      };
      const auth = loadOidcAuthenticator();
      // Observed here so that a missing package is reported by get(), not as an unhandled rejection.
      auth.catch(() => {});
      this.oidc = { auth, user };
    }
    if (isHttps && config.execProvider) {
      const defaults =
        options.now === undefined &&
        options.env === undefined &&
        options.stdinIsTerminal === undefined &&
        options.execTimeoutMs === undefined;
      this.exec = defaults
        ? sharedExecSource(config)
        : new ExecCredentialSource(config.execProvider, config, {
            now,
            ...(options.env ? { env: options.env } : {}),
            ...(options.stdinIsTerminal !== undefined ? { stdinIsTerminal: options.stdinIsTerminal } : {}),
            ...(options.execTimeoutMs !== undefined ? { timeoutMs: options.execTimeoutMs } : {}),
          });
    }
  }

  async get(): Promise<RequestCredentials> {
    const creds = await this.authorization();
    if (Object.keys(this.multiHeaders).length === 0) return creds;
    return { ...creds, multiHeaders: this.multiHeaders };
  }

  private async authorization(): Promise<RequestCredentials> {
    const headers: Record<string, string> = { ...this.staticHeaders };
    const c = this.config;
    if (c.host.startsWith('http://')) return { headers };
    if (this.tokenFile) {
      let token: string | undefined;
      try {
        token = await this.tokenFile.get();
      } catch (e) {
        // client-go falls back to the static token when the file cannot be read.
        if (!c.bearerToken) throw e;
        token = c.bearerToken;
      }
      headers.Authorization = `Bearer ${token}`;
    } else if (c.bearerToken) {
      headers.Authorization = `Bearer ${c.bearerToken}`;
    } else if (c.username !== undefined || c.password !== undefined) {
      headers.Authorization = `Basic ${Buffer.from(`${c.username ?? ''}:${c.password ?? ''}`).toString('base64')}`;
    } else if (this.oidc) {
      const token = await this.oidcToken(this.oidc);
      if (token) headers.Authorization = `Bearer ${token}`;
    } else if (this.exec) {
      const cred = await this.exec.get();
      if (cred.token) headers.Authorization = `Bearer ${cred.token}`;
      if (cred.clientCertificate) return { headers, clientCertificate: cred.clientCertificate };
    }
    return { headers };
  }

  private oidcToken(o: NonNullable<ConfigCredentialProvider['oidc']>): Promise<string | undefined> {
    o.inflight ??= (async () => {
      const opts: { headers: Record<string, string> } = { headers: {} };
      const auth = await o.auth;
      try {
        await auth.applyAuthentication(o.user, opts);
      } catch (e) {
        throw new CredentialError('AuthProviderFailed', `oidc auth provider: ${(e as Error).name}`, {
          cause: e,
        });
      }
      const h = opts.headers.Authorization;
      return h?.startsWith('Bearer ') ? h.slice(7) : undefined;
    })().finally(() => {
      o.inflight = undefined;
    });
    return o.inflight;
  }

  async onUnauthorized(used: RequestCredentials): Promise<boolean> {
    if (this.tokenFile) {
      this.tokenFile.reset();
      const fresh = await this.get().catch(() => undefined);
      return fresh !== undefined && fresh.headers.Authorization !== used.headers.Authorization;
    }
    if (this.exec && !this.config.bearerToken && this.config.username === undefined) {
      return this.exec.onUnauthorized(used);
    }
    return false;
  }
}

/**
 * The {@link CredentialProvider} for a config, mirroring client-go's transport wrappers: a token file
 * (re-read every minute and right after a 401; a failed read keeps the last good token, and falls back
 * to a static `bearerToken`), a static bearer token, basic auth, or an exec plugin (single flight, cached
 * until `expirationTimestamp`, re-run once per credential after a 401; shared by every provider of the same
 * plugin and cluster), an `oidc` auth-provider (client-node's `OpenIDConnectAuth`, an optional peer dependency loaded on first use), plus `Impersonate-*` headers.
 * Precedence when several are set: token file, static token, basic auth, oidc, exec.
 * For an `http://` host no credentials are produced (client-go applies user credentials only over TLS).
 * Static TLS client certificates stay in `config.tlsClientConfig`; only exec-issued ones come back here.
 */
export function credentialProviderFor(
  config: RestConfig,
  options: CredentialProviderOptions = {},
): CredentialProvider {
  return new ConfigCredentialProvider(config, options);
}
