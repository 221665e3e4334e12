/**
 * The contract every other layer reads: what it takes to reach and trust one API server.
 * Mirrors client-go's `rest.Config` (`k8s.io/client-go/rest/config.go`).
 */

/** TLS settings for the connection to the API server. PEM text, never file paths (paths are resolved at load). */
export interface TLSClientConfig {
  /** PEM bundle of CA certificates that sign the server's certificate. Absent: the system roots. */
  readonly caData?: string;
  /** PEM client certificate (mTLS). Goes with `keyData`. */
  readonly certData?: string;
  /** PEM private key of `certData`. Secret: never logged. */
  readonly keyData?: string;
  /** Name to verify the server certificate against (and SNI), instead of the host in `host`. */
  readonly serverName?: string;
  /** Skip server certificate verification. Together with `caData` it is a config error (client-go's rule). */
  readonly insecure?: boolean;
  /**
   * The file `caData` was read from (only when it came from a file). The transport re-reads it every 5 minutes
   * and switches to new connections when it changed (client-go's CA rotation). Added by @kubeloop/config.
   */
  readonly caFile?: string;
  /**
   * The files `certData`/`keyData` were read from (only when both came from files); re-read every 5 minutes like
   * client-go's `ReloadTLSFiles`. Added by @kubeloop/config.
   */
  readonly certFile?: string;
  readonly keyFile?: string;
}

/** An exec credential plugin, as in a kubeconfig's `users[].user.exec` (client.authentication.k8s.io v1/v1beta1). */
export interface ExecConfig {
  readonly apiVersion: string;
  /** The command; a relative path containing a separator is already resolved against its kubeconfig's folder. */
  readonly command: string;
  /**
   * The absolute path `command` was found at when the config was loaded (looked up on the loader's `PATH`);
   * the plugin run later is this binary, so the loader and the runner never pick two different ones.
   */
  readonly resolvedCommand?: string;
  readonly args?: readonly string[];
  readonly env?: ReadonlyArray<{ readonly name: string; readonly value: string }>;
  /** `Never` | `IfAvailable` | `Always`; client-go defaults it to `IfAvailable` for v1beta1. */
  readonly interactiveMode?: 'Never' | 'IfAvailable' | 'Always';
  /** Put the cluster's info into `KUBERNETES_EXEC_INFO` for the plugin. */
  readonly provideClusterInfo?: boolean;
  readonly installHint?: string;
  /**
   * The cluster's `extensions[client.authentication.k8s.io/exec].extension`, passed to the plugin as
   * `spec.cluster.config` when `provideClusterInfo` is set. Added by @kubeloop/config.
   */
  readonly clusterConfig?: unknown;
}

/** A legacy `auth-provider` entry (only `oidc` is still functional upstream). Its config holds secrets. */
export interface AuthProviderConfig {
  readonly name: string;
  readonly config: Readonly<Record<string, string>>;
}

/** Impersonation headers (`Impersonate-User`, `-Uid`, `-Group`, `-Extra-*`). */
export interface ImpersonationConfig {
  readonly userName?: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/**
 * Everything needed to talk to one API server. Plain data: safe to copy, and its `toString`/`inspect`
 * (when built by this package's loaders) redact every secret.
 */
export interface RestConfig {
  /** Base URL of the API server, e.g. `https://127.0.0.1:6443` (may carry a path prefix). */
  readonly host: string;
  readonly tlsClientConfig: TLSClientConfig;
  /** Static bearer token. Secret. */
  readonly bearerToken?: string;
  /** File holding a bearer token; re-read periodically and after a 401 (client-go's CachedFileTokenSource). */
  readonly bearerTokenFile?: string;
  readonly username?: string;
  /** Basic-auth password. Secret. */
  readonly password?: string;
  readonly execProvider?: ExecConfig;
  /** Legacy auth provider (`oidc`), served through @kubernetes/client-node. Added by @kubeloop/config. */
  readonly authProvider?: AuthProviderConfig;
  readonly impersonate?: ImpersonationConfig;
  /** `http://`, `https://` or `socks5://` proxy for every request; wins over `HTTPS_PROXY`. */
  readonly proxyUrl?: string;
  readonly disableCompression?: boolean;
  /** Client-side rate limit, requests per second. Negative disables throttling; 0 means client-go's default, 5. */
  readonly qps: number;
  /** Token-bucket size of the client-side rate limiter; 0 means client-go's default, 10. */
  readonly burst: number;
  /** Per-request timeout in milliseconds; 0 = none. Never applied to watches. */
  readonly timeoutMs: number;
  /** `User-Agent` header value. */
  readonly userAgent: string;
  /**
   * The default namespace of where the config came from: the kubeconfig context's `namespace`, or in a pod
   * `POD_NAMESPACE`, else the service account's namespace file (client-go's rules). Absent: none was named
   * (callers usually use `default`). Added by @kubeloop/config.
   */
  readonly namespace?: string;
}

/** The credentials to put on one request. */
export interface RequestCredentials {
  /** Headers to add: `Authorization`, `Impersonate-*`. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Headers sent once per value (`Impersonate-Group`, `Impersonate-Extra-*`), which cannot be comma-joined.
   * Added by @kubeloop/config.
   */
  readonly multiHeaders?: Readonly<Record<string, readonly string[]>>;
  /** A client certificate from an exec plugin, when it returned one instead of a token. */
  readonly clientCertificate?: { readonly certData: string; readonly keyData: string };
}

/**
 * CredentialProvider knows how to produce the current credentials for requests to one server, refreshing
 * them (token files, exec plugins) as client-go's transport wrappers do.
 */
export interface CredentialProvider {
  /** The credentials to use now. Concurrent callers share one refresh (single flight). */
  get(): Promise<RequestCredentials>;
  /**
   * Tell the provider that a request made with `used` got 401 Unauthorized. Resolves `true` when new
   * credentials were obtained and one retry is worthwhile (at most once per credential).
   */
  onUnauthorized(used: RequestCredentials): Promise<boolean>;
}
