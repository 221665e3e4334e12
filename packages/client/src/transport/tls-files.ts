import { readFile } from 'node:fs/promises';
import type { RestConfig } from '@kubeloop/config';
import type { Clock } from '@kubeloop/core';
import type { PemSet } from './dispatcher.js';

/**
 * Re-reads the CA and client certificate files a config names, at most every `intervalMs` (client-go's CA
 * rotation and `ReloadTLSFiles`, 5 minutes). A failed or empty read keeps the PEMs in use and is reported
 * through `onWarning` (the file named, never its content).
 * @internal
 */
export class TlsFiles {
  #pem: PemSet;
  #nextCheck: number;
  #check: Promise<boolean> | undefined;
  readonly #config: RestConfig;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #onWarning: (message: string) => void;

  constructor(config: RestConfig, clock: Clock, intervalMs: number, onWarning: (message: string) => void) {
    const t = config.tlsClientConfig;
    this.#config = config;
    this.#clock = clock;
    this.#intervalMs = intervalMs;
    this.#onWarning = onWarning;
    this.#pem = {
      ...(t.caData ? { caData: t.caData } : {}),
      ...(t.certData ? { certData: t.certData } : {}),
      ...(t.keyData ? { keyData: t.keyData } : {}),
    };
    this.#nextCheck = clock.now() + intervalMs;
  }

  /** The PEMs in use. */
  get pem(): PemSet {
    return this.#pem;
  }

  /** Re-reads the files when due; resolves to true when the PEMs changed (new connections must use them). */
  maybeReload(): Promise<boolean> {
    const t = this.#config.tlsClientConfig;
    if (!t.caFile && !(t.certFile && t.keyFile)) return Promise.resolve(false);
    if (this.#check) return this.#check;
    if (this.#clock.now() < this.#nextCheck) return Promise.resolve(false);
    this.#check = this.#reload().finally(() => {
      this.#nextCheck = this.#clock.now() + this.#intervalMs;
      this.#check = undefined;
    });
    return this.#check;
  }

  async #reload(): Promise<boolean> {
    const t = this.#config.tlsClientConfig;
    const read = async (field: string, f: string | undefined) => {
      if (!f) return undefined;
      try {
        const text = await readFile(f, 'utf8');
        if (text.trim() !== '') return text;
        this.#onWarning(`TLS file ${field} ${f} is empty; keeping the one in use`);
      } catch (e) {
        this.#onWarning(
          `cannot re-read TLS file ${field} ${f} (${(e as NodeJS.ErrnoException).code ?? 'error'}); keeping the one in use`,
        );
      }
      return undefined;
    };
    const [ca, cert, key] = await Promise.all([
      read('caFile', t.caFile),
      read('certFile', t.certFile),
      read('keyFile', t.keyFile),
    ]);
    const next = { ...this.#pem };
    if (ca) next.caData = ca;
    if (cert && key) {
      next.certData = cert;
      next.keyData = key;
    }
    if (
      next.caData === this.#pem.caData &&
      next.certData === this.#pem.certData &&
      next.keyData === this.#pem.keyData
    )
      return false;
    this.#pem = next;
    return true;
  }
}
