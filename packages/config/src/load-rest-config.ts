import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KubeconfigError } from './errors.js';
import {
  loadKubeconfigFiles,
  type MergedKubeconfig,
  type RawCluster,
  type RawUser,
  splitKubeconfigEnv,
} from './internal/kubeconfig-files.js';
import { withRedaction } from './redaction.js';
import type {
  AuthProviderConfig,
  ExecConfig,
  ImpersonationConfig,
  RestConfig,
  TLSClientConfig,
} from './rest-config.js';

/** kubeloop's own version, in the `User-Agent`. */
export const KUBELOOP_VERSION = '0.1.0';
/** Default client-side rate limit (requests/s): kube-controller-manager's, and controller-runtime's before v0.21. */
export const DEFAULT_QPS = 20;
/** Default token-bucket size. */
export const DEFAULT_BURST = 30;
/** Where a pod's service account credentials are mounted. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Options of {@link loadRestConfig}. Every field is optional; the defaults read the real process. */
export interface LoadRestConfigOptions {
  /** Explicit kubeconfig path; wins over `--kubeconfig` and `KUBECONFIG`. A missing file is an error. */
  readonly kubeconfig?: string;
  /** Context to use instead of `current-context`; wins over a `--context` flag. */
  readonly context?: string;
  /** Command line to read `--kubeconfig` / `--context` from. Default `process.argv`. */
  readonly argv?: readonly string[];
  /** Environment to read `KUBECONFIG`, `HOME`, `PATH`, `KUBERNETES_SERVICE_*` from. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Home folder for `~/.kube/config`. Default: {@link userHomeDir} (client-go's rules), else `os.homedir()`. */
  readonly homeDir?: string;
  /** Folder of the in-cluster service account files. Default {@link SERVICE_ACCOUNT_DIR}. */
  readonly serviceAccountDir?: string;
  /** Client-side QPS. Default {@link DEFAULT_QPS}; negative disables throttling. */
  readonly qps?: number;
  /** Token-bucket size. Default {@link DEFAULT_BURST}. */
  readonly burst?: number;
  /** Per-request timeout in milliseconds (never applied to watches). Default 0 (none). */
  readonly timeoutMs?: number;
  /** Full `User-Agent` to send instead of the default. */
  readonly userAgent?: string;
  /** Application name in the default `User-Agent`. Default: the main script's base name. */
  readonly appName?: string;
  /** Application version in the default `User-Agent`. Default `v0.0.0`. */
  readonly appVersion?: string;
  /** Receives non-fatal warnings (e.g. credentials dropped for an `http://` server). Default `process.emitWarning`. */
  readonly onWarning?: (message: string) => void;
}

type Env = Readonly<Record<string, string | undefined>>;

function defaultWarn(message: string): void {
  process.emitWarning(message, { type: 'KubeloopConfigWarning' });
}

/** Value of `--name=value`, `--name value`, `-name=value` or `-name value` in argv (Go flag syntax). */
export function flagValue(argv: readonly string[], name: string): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    for (const prefix of [`--${name}`, `-${name}`]) {
      if (arg === prefix) return argv[i + 1];
      if (arg.startsWith(`${prefix}=`)) return arg.slice(prefix.length + 1);
    }
  }
  return undefined;
}

/** The default user agent: `<app>/<version> (<os>/<arch>) kubeloop/<version>` (client-go's shape). */
export function defaultUserAgent(
  appName?: string,
  appVersion?: string,
  argv: readonly string[] = process.argv,
): string {
  const script = argv[1];
  const app = appName ?? (script ? path.basename(script).replace(/\.[cm]?[jt]s$/, '') : 'node');
  return `${app || 'node'}/${appVersion ?? 'v0.0.0'} (${process.platform}/${process.arch}) kubeloop/${KUBELOOP_VERSION}`;
}

function tunables(options: LoadRestConfigOptions) {
  return {
    qps: options.qps ?? DEFAULT_QPS,
    burst: options.burst ?? DEFAULT_BURST,
    timeoutMs: options.timeoutMs ?? 0,
    userAgent: options.userAgent ?? defaultUserAgent(options.appName, options.appVersion, options.argv),
  };
}

function isInClusterPossible(env: Env): boolean {
  return Boolean(env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT);
}

/**
 * The in-cluster config from a pod's service account (client-go `rest.InClusterConfig`): host from
 * `KUBERNETES_SERVICE_HOST`/`_PORT` (IPv6-safe), token from `<dir>/token` set as both `bearerToken` and
 * `bearerTokenFile` (so it is re-read), CA from `<dir>/ca.crt` (an unreadable CA is only a warning).
 * @throws {KubeconfigError} `NotInCluster` when the env vars are missing or the token cannot be read.
 */
export function inClusterConfig(options: LoadRestConfigOptions = {}): RestConfig {
  const env = options.env ?? process.env;
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new KubeconfigError(
      'NotInCluster',
      'unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined',
    );
  }
  const dir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const tokenFile = path.join(dir, 'token');
  let token: string;
  try {
    token = fs.readFileSync(tokenFile, 'utf8').trim();
  } catch (e) {
    throw new KubeconfigError(
      'NotInCluster',
      `cannot read service account token (${(e as NodeJS.ErrnoException).code})`,
      {
        file: tokenFile,
      },
    );
  }
  const warn = options.onWarning ?? defaultWarn;
  let caData: string | undefined;
  try {
    caData = fs.readFileSync(path.join(dir, 'ca.crt'), 'utf8');
  } catch {
    warn(`in-cluster: cannot read ${path.join(dir, 'ca.crt')}; using the system roots`);
  }
  const hostPort = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  let namespace = env.POD_NAMESPACE || undefined;
  if (!namespace) {
    try {
      namespace = fs.readFileSync(path.join(dir, 'namespace'), 'utf8').trim() || undefined;
    } catch {
      // client-go falls back to "default"
    }
  }
  return withRedaction({
    host: `https://${hostPort}`,
    tlsClientConfig: caData ? { caData, caFile: path.join(dir, 'ca.crt') } : {},
    bearerToken: token,
    bearerTokenFile: tokenFile,
    ...tunables(options),
    namespace: namespace ?? 'default',
  });
}

function str(v: unknown, file: string, field: string): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new KubeconfigError('InvalidEntry', 'must be a string', { file, field });
  return v;
}

function bool(v: unknown, file: string, field: string): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean')
    throw new KubeconfigError('InvalidEntry', 'must be true or false', { file, field });
  return v;
}

function base64Text(v: unknown, file: string, field: string): string | undefined {
  const s = str(v, file, field);
  if (s === undefined) return undefined;
  if (!/^[A-Za-z0-9+/=\s_-]*$/.test(s))
    throw new KubeconfigError('InvalidEntry', 'not valid base64', { file, field });
  return Buffer.from(s, 'base64').toString('utf8');
}

function readReferenced(p: string, file: string, field: string): string {
  try {
    return fs.readFileSync(p, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new KubeconfigError(
      code === 'ENOENT' ? 'FileNotFound' : 'FileUnreadable',
      `cannot read ${p} (${code})`,
      {
        file,
        field,
      },
    );
  }
}

function findOnPath(command: string, env: Env): boolean {
  const dirs = (env.PATH ?? '').split(path.delimiter).filter(Boolean);
  const exts =
    process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').concat(['']) : [''];
  for (const dir of dirs) {
    for (const ext of exts) {
      try {
        fs.accessSync(path.join(dir, command + ext), fs.constants.X_OK);
        return true;
      } catch {
        // keep looking
      }
    }
  }
  return false;
}

function clusterTls(c: RawCluster, file: string, at: string): TLSClientConfig {
  const insecure = bool(c['insecure-skip-tls-verify'], file, `${at}.insecure-skip-tls-verify`);
  const caFile = str(c['certificate-authority'], file, `${at}.certificate-authority`);
  const caInline = base64Text(c['certificate-authority-data'], file, `${at}.certificate-authority-data`);
  if (insecure && (caFile || caInline)) {
    throw new KubeconfigError(
      'ConflictingFields',
      'certificate-authority and insecure-skip-tls-verify are mutually exclusive (a root CA with the insecure flag is not allowed)',
      { file, field: at },
    );
  }
  const caData =
    caInline ?? (caFile ? readReferenced(caFile, file, `${at}.certificate-authority`) : undefined);
  const serverName = str(c['tls-server-name'], file, `${at}.tls-server-name`);
  return {
    ...(caData ? { caData } : {}),
    ...(caData && !caInline && caFile ? { caFile } : {}),
    ...(serverName ? { serverName } : {}),
    ...(insecure ? { insecure } : {}),
  };
}

function normaliseServer(raw: string | undefined, file: string, field: string): string {
  if (!raw) throw new KubeconfigError('InvalidServer', 'no server defined', { file, field });
  const withScheme = raw.includes('://') ? raw : `https://${raw}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw new KubeconfigError('InvalidServer', 'not a valid URL', { file, field });
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') {
    throw new KubeconfigError('InvalidServer', `unsupported scheme "${u.protocol.slice(0, -1)}"`, {
      file,
      field,
    });
  }
  // client-go keeps a path as prefix and strips query and fragment.
  const prefix = u.pathname.replace(/\/+$/, '');
  return `${u.protocol}//${u.host}${prefix}`;
}

function proxyUrlOf(raw: string | undefined, file: string, field: string): string | undefined {
  if (!raw) return undefined;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new KubeconfigError('InvalidProxyUrl', 'not a valid URL', { file, field });
  }
  if (!['http:', 'https:', 'socks5:'].includes(u.protocol)) {
    throw new KubeconfigError(
      'InvalidProxyUrl',
      `unsupported scheme "${u.protocol.slice(0, -1)}", must be http, https, or socks5`,
      { file, field },
    );
  }
  return raw;
}

function execClusterExtension(c: RawCluster): unknown {
  if (!Array.isArray(c.extensions)) return undefined;
  for (const e of c.extensions) {
    if (
      e &&
      typeof e === 'object' &&
      (e as Record<string, unknown>).name === 'client.authentication.k8s.io/exec'
    ) {
      return (e as Record<string, unknown>).extension;
    }
  }
  return undefined;
}

const EXEC_API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'];

function execConfigOf(raw: unknown, file: string, at: string, env: Env, clusterConfig: unknown): ExecConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new KubeconfigError('InvalidEntry', 'not a mapping', { file, field: at });
  }
  const e = raw as Record<string, unknown>;
  const apiVersion = str(e.apiVersion, file, `${at}.apiVersion`);
  if (!apiVersion || !EXEC_API_VERSIONS.includes(apiVersion)) {
    throw new KubeconfigError(
      'InvalidEntry',
      `unsupported "${apiVersion ?? ''}", must be ${EXEC_API_VERSIONS.join(' or ')}`,
      { file, field: `${at}.apiVersion` },
    );
  }
  const command = str(e.command, file, `${at}.command`);
  if (!command) throw new KubeconfigError('InvalidEntry', 'missing', { file, field: `${at}.command` });
  if (path.isAbsolute(command)) {
    try {
      fs.accessSync(command, fs.constants.X_OK);
    } catch {
      throw new KubeconfigError('InvalidEntry', 'not found or not executable', {
        file,
        field: `${at}.command`,
      });
    }
  } else if (!findOnPath(command, env)) {
    throw new KubeconfigError('InvalidEntry', 'not found on PATH', { file, field: `${at}.command` });
  }
  let args: string[] | undefined;
  if (e.args !== undefined && e.args !== null) {
    if (!Array.isArray(e.args) || e.args.some((a) => typeof a !== 'string')) {
      throw new KubeconfigError('InvalidEntry', 'must be a list of strings', { file, field: `${at}.args` });
    }
    args = e.args as string[];
  }
  let envList: Array<{ name: string; value: string }> | undefined;
  if (e.env !== undefined && e.env !== null) {
    if (!Array.isArray(e.env))
      throw new KubeconfigError('InvalidEntry', 'must be a list', { file, field: `${at}.env` });
    envList = e.env.map((item, i) => {
      const it = item as Record<string, unknown> | null;
      if (!it || typeof it.name !== 'string' || typeof it.value !== 'string') {
        throw new KubeconfigError('InvalidEntry', 'needs a string name and value', {
          file,
          field: `${at}.env[${i}]`,
        });
      }
      return { name: it.name, value: it.value };
    });
  }
  let interactiveMode = e.interactiveMode as ExecConfig['interactiveMode'] | undefined;
  if (interactiveMode === undefined || (interactiveMode as unknown) === '') {
    if (apiVersion.endsWith('/v1')) {
      throw new KubeconfigError(
        'InvalidEntry',
        'must be specified for apiVersion v1 (Never, IfAvailable or Always)',
        {
          file,
          field: `${at}.interactiveMode`,
        },
      );
    }
    interactiveMode = 'IfAvailable';
  } else if (!['Never', 'IfAvailable', 'Always'].includes(interactiveMode)) {
    throw new KubeconfigError('InvalidEntry', 'must be Never, IfAvailable or Always', {
      file,
      field: `${at}.interactiveMode`,
    });
  }
  const installHint = str(e.installHint, file, `${at}.installHint`);
  const provideClusterInfo = bool(e.provideClusterInfo, file, `${at}.provideClusterInfo`);
  return {
    apiVersion,
    command,
    ...(args ? { args } : {}),
    ...(envList ? { env: envList } : {}),
    interactiveMode,
    ...(provideClusterInfo ? { provideClusterInfo } : {}),
    ...(installHint ? { installHint } : {}),
    ...(clusterConfig !== undefined ? { clusterConfig } : {}),
  };
}

interface UserPart {
  bearerToken?: string;
  bearerTokenFile?: string;
  username?: string;
  password?: string;
  execProvider?: ExecConfig;
  authProvider?: AuthProviderConfig;
  impersonate?: ImpersonationConfig;
  certData?: string;
  keyData?: string;
  certFile?: string;
  keyFile?: string;
}

function userOf(u: RawUser, file: string, at: string, env: Env, clusterConfig: unknown): UserPart {
  const out: UserPart = {};
  const token = str(u.token, file, `${at}.token`);
  const tokenFile =
    str(u.tokenFile, file, `${at}.tokenFile`) ?? str(u['token-file'], file, `${at}.token-file`);
  const username = str(u.username, file, `${at}.username`);
  const password = str(u.password, file, `${at}.password`);
  if ((token || tokenFile) && (username || password)) {
    throw new KubeconfigError(
      'ConflictingFields',
      'username/password or bearer token may be set, but not both',
      {
        file,
        field: at,
      },
    );
  }
  if (token) out.bearerToken = token.trim();
  if (tokenFile) out.bearerTokenFile = tokenFile;
  if (username) out.username = username;
  if (password) out.password = password;

  const certInline = base64Text(u['client-certificate-data'], file, `${at}.client-certificate-data`);
  const keyInline = base64Text(u['client-key-data'], file, `${at}.client-key-data`);
  const certFile = str(u['client-certificate'], file, `${at}.client-certificate`);
  const keyFile = str(u['client-key'], file, `${at}.client-key`);
  const certData =
    certInline ?? (certFile ? readReferenced(certFile, file, `${at}.client-certificate`) : undefined);
  const keyData = keyInline ?? (keyFile ? readReferenced(keyFile, file, `${at}.client-key`) : undefined);
  if (certData && !keyData) {
    throw new KubeconfigError(
      'InvalidEntry',
      'client-key-data or client-key must be given with a client certificate',
      {
        file,
        field: `${at}.client-key`,
      },
    );
  }
  if (keyData && !certData) {
    throw new KubeconfigError(
      'InvalidEntry',
      'client-certificate-data or client-certificate must be given with a key',
      {
        file,
        field: `${at}.client-certificate`,
      },
    );
  }
  if (certData && keyData) {
    out.certData = certData;
    out.keyData = keyData;
    if (!certInline && !keyInline && certFile && keyFile) {
      out.certFile = certFile;
      out.keyFile = keyFile;
    }
  }

  const ap = u['auth-provider'];
  if (ap !== undefined && ap !== null) {
    const a = ap as Record<string, unknown>;
    const name = str(a.name, file, `${at}.auth-provider.name`);
    if (name !== 'oidc') {
      throw new KubeconfigError(
        'UnsupportedAuthProvider',
        `auth provider "${name ?? ''}" was removed upstream; use an exec credential plugin instead`,
        { file, field: `${at}.auth-provider.name` },
      );
    }
    const config: Record<string, string> = {};
    if (a.config && typeof a.config === 'object') {
      for (const [k, v] of Object.entries(a.config as Record<string, unknown>)) {
        if (typeof v === 'string') config[k] = v;
      }
    }
    out.authProvider = { name, config };
  }
  if (u.exec !== undefined && u.exec !== null) {
    if (out.authProvider) {
      throw new KubeconfigError('ConflictingFields', 'auth-provider cannot be combined with an exec plugin', {
        file,
        field: at,
      });
    }
    out.execProvider = execConfigOf(u.exec, file, `${at}.exec`, env, clusterConfig);
  }

  const as = str(u.as, file, `${at}.as`);
  const asUid = str(u['as-uid'], file, `${at}.as-uid`);
  const groupsRaw = u['as-groups'];
  const extraRaw = u['as-user-extra'];
  const impersonate: {
    userName?: string;
    uid?: string;
    groups?: string[];
    extra?: Record<string, string[]>;
  } = {};
  if (as) impersonate.userName = as;
  if (asUid) impersonate.uid = asUid;
  if (groupsRaw !== undefined && groupsRaw !== null) {
    if (!Array.isArray(groupsRaw) || groupsRaw.some((g) => typeof g !== 'string')) {
      throw new KubeconfigError('InvalidEntry', 'must be a list of strings', {
        file,
        field: `${at}.as-groups`,
      });
    }
    if (groupsRaw.length > 0) impersonate.groups = groupsRaw as string[];
  }
  if (extraRaw !== undefined && extraRaw !== null) {
    if (typeof extraRaw !== 'object' || Array.isArray(extraRaw)) {
      throw new KubeconfigError('InvalidEntry', 'must be a map of string lists', {
        file,
        field: `${at}.as-user-extra`,
      });
    }
    const extra: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(extraRaw as Record<string, unknown>)) {
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
        throw new KubeconfigError('InvalidEntry', 'must be a list of strings', {
          file,
          field: `${at}.as-user-extra.${k}`,
        });
      }
      extra[k] = v as string[];
    }
    if (Object.keys(extra).length > 0) impersonate.extra = extra;
  }
  if ((impersonate.uid || impersonate.groups || impersonate.extra) && !impersonate.userName) {
    throw new KubeconfigError('InvalidEntry', 'impersonating groups, uid or extra requires a user (as)', {
      file,
      field: `${at}.as`,
    });
  }
  if (Object.keys(impersonate).length > 0) out.impersonate = impersonate;
  return out;
}

/**
 * Turn a merged kubeconfig into a `RestConfig` for one context (client-go `DirectClientConfig.ClientConfig`).
 * @throws {KubeconfigError} naming the file, entry and field of the first problem found.
 */
export function restConfigFromKubeconfig(
  merged: MergedKubeconfig,
  options: LoadRestConfigOptions & { readonly context?: string } = {},
): RestConfig {
  const env = options.env ?? process.env;
  const warn = options.onWarning ?? defaultWarn;
  const files = merged.files.join(', ');
  const contextName = options.context ?? merged.currentContext?.name;
  if (!contextName) {
    throw new KubeconfigError('NoCurrentContext', 'no current context is set; pass a context to use', {
      file: files,
    });
  }
  const ctx = merged.contexts.get(contextName);
  if (!ctx) {
    throw new KubeconfigError('ContextNotFound', `context "${contextName}" not found`, { file: files });
  }
  const ctxAt = `contexts[${contextName}]`;
  const clusterName = str(ctx.value.cluster, ctx.file, `${ctxAt}.cluster`);
  if (!clusterName)
    throw new KubeconfigError('ClusterNotFound', 'no cluster named', {
      file: ctx.file,
      field: `${ctxAt}.cluster`,
    });
  const cluster = merged.clusters.get(clusterName);
  if (!cluster) {
    throw new KubeconfigError('ClusterNotFound', `cluster "${clusterName}" not found`, {
      file: ctx.file,
      field: `${ctxAt}.cluster`,
    });
  }
  const namespace = str(ctx.value.namespace, ctx.file, `${ctxAt}.namespace`);
  const cAt = `clusters[${clusterName}]`;
  const host = normaliseServer(
    str(cluster.value.server, cluster.file, `${cAt}.server`),
    cluster.file,
    `${cAt}.server`,
  );
  const tls = clusterTls(cluster.value, cluster.file, cAt);
  const proxyUrl = proxyUrlOf(
    str(cluster.value['proxy-url'], cluster.file, `${cAt}.proxy-url`),
    cluster.file,
    `${cAt}.proxy-url`,
  );
  const disableCompression = bool(
    cluster.value['disable-compression'],
    cluster.file,
    `${cAt}.disable-compression`,
  );

  let user: UserPart = {};
  const userName = str(ctx.value.user, ctx.file, `${ctxAt}.user`);
  if (userName) {
    const u = merged.users.get(userName);
    if (!u) {
      throw new KubeconfigError('UserNotFound', `user "${userName}" not found`, {
        file: ctx.file,
        field: `${ctxAt}.user`,
      });
    }
    user = userOf(u.value, u.file, `users[${userName}]`, env, execClusterExtension(cluster.value));
  }
  const { certData, keyData, certFile, keyFile, impersonate, ...auth } = user;
  const hasCredentials = Object.keys(auth).length > 0 || certData !== undefined || impersonate !== undefined;
  let credentials: Omit<UserPart, 'certData' | 'keyData' | 'impersonate'> = auth;
  let clientCert: { certData?: string; keyData?: string; certFile?: string; keyFile?: string } =
    certData && keyData ? { certData, keyData, ...(certFile && keyFile ? { certFile, keyFile } : {}) } : {};
  if (host.startsWith('http://') && hasCredentials) {
    warn(
      `${ctxAt}: server ${host} is not https; the credentials of user "${userName}" are not sent (client-go's rule)`,
    );
    credentials = {};
    clientCert = {};
  }
  const identity = host.startsWith('http://') ? {} : impersonate ? { impersonate } : {};
  return withRedaction({
    host,
    tlsClientConfig: { ...tls, ...clientCert },
    ...credentials,
    ...identity,
    ...(proxyUrl ? { proxyUrl } : {}),
    ...(disableCompression ? { disableCompression } : {}),
    ...tunables(options),
    ...(namespace ? { namespace } : {}),
  });
}

function homeDirOf(options: LoadRestConfigOptions): string | undefined {
  if (options.homeDir) return options.homeDir;
  if (options.env) return options.env.HOME || os.homedir();
  return userHomeDir(process.env, process.platform) ?? os.homedir();
}

/**
 * The user's home folder as client-go's `util/homedir.HomeDir` finds it. Elsewhere than Windows: `HOME`
 * when it exists. On Windows, of `HOME`, `HOMEDRIVE`+`HOMEPATH` and `USERPROFILE`: the first that holds
 * `.kube\config`, else (in the order `HOME`, `USERPROFILE`, `HOMEDRIVE`+`HOMEPATH`) the first that is
 * writable, else the first that exists. Undefined when none qualifies.
 *
 * Written here rather than taken from `@kubernetes/client-node`: importing its `findHomeDir` loads the whole
 * library (about 1.3 s and 40 MB at start-up) for a few `stat` calls.
 */
export function userHomeDir(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string | undefined {
  const exists = (p: string, mode = fs.constants.F_OK): boolean => {
    try {
      fs.accessSync(p, mode);
      return true;
    } catch {
      return false;
    }
  };
  if (platform !== 'win32') return env.HOME && exists(env.HOME) ? env.HOME : undefined;
  const home = env.HOME ?? '';
  const drivePath = env.HOMEDRIVE && env.HOMEPATH ? path.join(env.HOMEDRIVE, env.HOMEPATH) : '';
  const profile = env.USERPROFILE ?? '';
  const byConfig = [...new Set([home, drivePath, profile])].filter(Boolean);
  const byProfile = [...new Set([home, profile, drivePath])].filter(Boolean);
  return (
    byConfig.find((d) => exists(path.join(d, '.kube', 'config'))) ??
    byProfile.find((d) => exists(d, fs.constants.W_OK)) ??
    byProfile.find((d) => exists(d))
  );
}

/**
 * Find and load the `RestConfig`, in controller-runtime's order (`pkg/client/config.GetConfig`):
 * 1. `options.kubeconfig`, else a `--kubeconfig` flag in argv — that one file only; missing is an error;
 * 2. when `KUBECONFIG` is unset, in-cluster (service account) if the pod env is present;
 * 3. the `KUBECONFIG` path list (de-duplicated, missing files skipped, merged: first definition wins);
 *    if all are missing, in-cluster when possible;
 * 4. `~/.kube/config`.
 * The context is `options.context`, else `--context`, else the merged `current-context`.
 * QPS/burst default to 20/30 (see the package README for how this differs from client-go and
 * current controller-runtime).
 * @throws {KubeconfigError} when nothing is found or the chosen config is invalid.
 */
export function loadRestConfig(options: LoadRestConfigOptions = {}): RestConfig {
  const env = options.env ?? process.env;
  const argv = options.argv ?? process.argv;
  const context = options.context ?? flagValue(argv, 'context');
  const opts = { ...options, ...(context ? { context } : {}) };
  const explicit = options.kubeconfig ?? flagValue(argv, 'kubeconfig');
  if (explicit) return restConfigFromKubeconfig(loadKubeconfigFiles([explicit], false), opts);

  // An empty KUBECONFIG counts as unset (Go's os.Getenv cannot tell them apart).
  const kubeconfigEnv = env.KUBECONFIG || undefined;
  if (kubeconfigEnv === undefined && isInClusterPossible(env)) {
    try {
      return inClusterConfig(options);
    } catch (e) {
      if (!(e instanceof KubeconfigError && e.code === 'NotInCluster')) throw e;
    }
  }
  if (kubeconfigEnv !== undefined) {
    const files = splitKubeconfigEnv(kubeconfigEnv);
    const merged = loadKubeconfigFiles(files, true);
    const empty = merged.clusters.size === 0 && merged.users.size === 0 && merged.contexts.size === 0;
    if (!empty) return restConfigFromKubeconfig(merged, opts);
    if (isInClusterPossible(env)) return inClusterConfig(options);
    throw new KubeconfigError(
      'NoConfiguration',
      `no configuration found in KUBECONFIG (${files.join(', ')})`,
    );
  }
  const home = homeDirOf(options);
  if (home) {
    const file = path.join(home, '.kube', 'config');
    if (fs.existsSync(file)) return restConfigFromKubeconfig(loadKubeconfigFiles([file], false), opts);
  }
  throw new KubeconfigError(
    'NoConfiguration',
    'no configuration has been provided: pass --kubeconfig, set KUBECONFIG, run in a cluster or create ~/.kube/config',
  );
}

/** Alias of {@link loadRestConfig}, named after controller-runtime's `config.GetConfig`. */
export const getConfig: (options?: LoadRestConfigOptions) => RestConfig = loadRestConfig;

/**
 * {@link loadRestConfig}, or print `error: <message>` to stderr and exit with status 1
 * (controller-runtime's `GetConfigOrDie`).
 */
export function getConfigOrDie(options: LoadRestConfigOptions = {}): RestConfig {
  try {
    return loadRestConfig(options);
  } catch (e) {
    process.stderr.write(`error: unable to get kubeconfig: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}

/** Load a kubeconfig file list (merged by client-go's rules) into a `RestConfig`, without the search order. */
export function loadRestConfigFromFiles(
  files: readonly string[],
  options: LoadRestConfigOptions = {},
): RestConfig {
  return restConfigFromKubeconfig(loadKubeconfigFiles(files, false), options);
}
