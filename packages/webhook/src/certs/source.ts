/** Where the webhook server gets its serving certificate from. */

/** A PEM certificate chain and its private key. */
export interface CertificatePair {
  readonly cert: string;
  readonly key: string;
}

/**
 * A source of the serving certificate that may change while the server runs (a {@link CertWatcher} over
 * mounted files, or {@link SelfSignedCertificates}). The server asks `current()` when it starts and
 * swaps its TLS context on each `onChange` (new connections get the new pair; open ones finish on the old).
 */
export interface CertificateSource {
  /** Loads the first pair and begins watching until `signal` aborts. @throws when no usable pair is there. */
  start(signal: AbortSignal): Promise<void>;
  /** The pair in use. @throws Error before `start` resolved. */
  current(): CertificatePair;
  /** Calls `listener` after each change of the pair; returns the function that removes it. */
  onChange(listener: (pair: CertificatePair) => void): () => void;
}
