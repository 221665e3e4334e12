/**
 * Typed errors of `@kubeloop/config`. Every error has a stable `code`; no message ever carries a token,
 * password or key.
 */

/** Stable codes of {@link KubeconfigError}. */
export type KubeconfigErrorCode =
  | 'NoConfiguration'
  | 'FileNotFound'
  | 'FileUnreadable'
  | 'InvalidYaml'
  | 'InvalidEntry'
  | 'NoCurrentContext'
  | 'ContextNotFound'
  | 'ClusterNotFound'
  | 'UserNotFound'
  | 'ConflictingFields'
  | 'InvalidServer'
  | 'InvalidProxyUrl'
  | 'InvalidCertificate'
  | 'UnsupportedAuthProvider'
  | 'NotInCluster';

/**
 * A kubeconfig (or in-cluster environment) that cannot be turned into a `RestConfig`. The message names
 * the file, the entry and the field, e.g. `/home/me/.kube/config: users[dev].exec.command: not found on PATH`.
 * Never carries a parser stack trace nor any secret.
 */
export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError';
  /** Stable machine-readable reason. */
  readonly code: KubeconfigErrorCode;
  /** The kubeconfig file concerned, when there is one. */
  readonly file: string | undefined;
  /** The entry and field, e.g. `users[dev].exec.command`, when there is one. */
  readonly field: string | undefined;

  constructor(code: KubeconfigErrorCode, detail: string, where: { file?: string; field?: string } = {}) {
    const prefix = [where.file, where.field].filter((p): p is string => Boolean(p)).join(': ');
    super(prefix ? `${prefix}: ${detail}` : detail);
    this.code = code;
    this.file = where.file;
    this.field = where.field;
  }
}

/** Stable codes of {@link CredentialError}. */
export type CredentialErrorCode =
  | 'TokenFileUnreadable'
  | 'ExecNotFound'
  | 'ExecFailed'
  | 'ExecInvalidOutput'
  | 'ExecInteractiveRequired'
  | 'ExecTimeout'
  | 'AuthProviderFailed';

/**
 * Credentials could not be obtained for a request (token file unreadable with no earlier good token, exec
 * plugin failed or printed something that is not an ExecCredential, …). Never carries the credential.
 */
export class CredentialError extends Error {
  override readonly name = 'CredentialError';
  readonly code: CredentialErrorCode;
  constructor(code: CredentialErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
