/** Options of {@link loadRestConfig}. Every field is optional; the defaults read the real process. */
export interface LoadRestConfigOptions {
  /** Explicit kubeconfig path; wins over `--kubeconfig` and `KUBECONFIG`. A missing file is an error. */
  readonly kubeconfig?: string;
  /** Context to use instead of `current-context`; wins over a `--context` flag. */
  readonly context?: string;
  /** Command line to read `--kubeconfig` / `--context` from. Default `process.argv`. */
  readonly argv?: readonly string[];
  /**
   * Environment to read `KUBECONFIG`, `HOME`, `PATH`, `KUBERNETES_SERVICE_*` from. Default `process.env`.
   * An exec plugin named without a folder is looked up on this `PATH` once, at load time, and that same
   * binary is the one run later (`ExecConfig.resolvedCommand`).
   */
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

/** An environment as `process.env` holds it. */
export type Env = Readonly<Record<string, string | undefined>>;

/** Where warnings go when the caller gives no `onWarning`. */
export function defaultWarn(message: string): void {
  process.emitWarning(message, { type: 'KubeloopConfigWarning' });
}
