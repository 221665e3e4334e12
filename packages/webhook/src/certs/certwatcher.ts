/**
 * Serving certificate from mounted files, reloaded when they change (controller-runtime `pkg/certwatcher`):
 * watches the files' directories (so kubelet's `..data` symlink swap of a Secret volume is seen) and polls
 * as a fallback. A pair that does not load (key and certificate not matching, half-written files) is
 * skipped and the previous one kept, so a swap never breaks serving.
 */
import { type FSWatcher, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createSecureContext } from 'node:tls';
import type { Logger } from '@kubeloop/core';
import { discardLogger } from '@kubeloop/core';
import type { CertificatePair, CertificateSource } from './source.js';

/** Options of {@link CertWatcher}. */
export interface CertWatcherOptions {
  /** Path of the PEM certificate chain, e.g. `/tmp/k8s-webhook-server/serving-certs/tls.crt`. */
  readonly certPath: string;
  /** Path of the PEM private key. */
  readonly keyPath: string;
  /** Fallback polling period in ms (controller-runtime polls every 10 s too); 0 disables polling. @defaultValue 10000 */
  readonly pollIntervalMs?: number;
  readonly logger?: Logger;
}

/** Mounted-file {@link CertificateSource} with hot reload. */
export class CertWatcher implements CertificateSource {
  readonly #certPath: string;
  readonly #keyPath: string;
  readonly #pollIntervalMs: number;
  readonly #logger: Logger;
  readonly #listeners = new Set<(pair: CertificatePair) => void>();
  #pair: CertificatePair | undefined;
  #reloading: Promise<boolean> | undefined;
  #again = false;
  /** Successful reloads after the first load (for tests and metrics). */
  reloads = 0;

  constructor(options: CertWatcherOptions) {
    this.#certPath = options.certPath;
    this.#keyPath = options.keyPath;
    this.#pollIntervalMs = options.pollIntervalMs ?? 10_000;
    this.#logger = (options.logger ?? discardLogger).child({ component: 'certwatcher' });
  }

  current(): CertificatePair {
    if (!this.#pair) throw new Error(`certwatcher: no certificate loaded yet from ${this.#certPath}`);
    return this.#pair;
  }

  onChange(listener: (pair: CertificatePair) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Reads both files and, when they changed and load as a matching pair, makes them current and tells the
   * listeners. Resolves `true` when the pair changed. Concurrent calls coalesce into one more read.
   */
  reload(): Promise<boolean> {
    if (this.#reloading) {
      this.#again = true;
      return this.#reloading;
    }
    this.#reloading = (async () => {
      let changed = false;
      do {
        this.#again = false;
        changed = (await this.#readOnce()) || changed;
      } while (this.#again);
      this.#reloading = undefined;
      return changed;
    })();
    return this.#reloading;
  }

  async #readOnce(): Promise<boolean> {
    let cert: string;
    let key: string;
    try {
      [cert, key] = await Promise.all([readFile(this.#certPath, 'utf8'), readFile(this.#keyPath, 'utf8')]);
    } catch (e) {
      if (!this.#pair)
        throw new Error(
          `certwatcher: cannot read ${this.#certPath} / ${this.#keyPath}: ${(e as Error).message}`,
        );
      this.#logger.debug(
        { err: (e as Error).message },
        'certificate files not readable now; keeping the loaded pair',
      );
      return false;
    }
    if (this.#pair && this.#pair.cert === cert && this.#pair.key === key) return false;
    try {
      createSecureContext({ cert, key });
    } catch (e) {
      // the message names the mismatch, never the key's bytes
      if (!this.#pair)
        throw new Error(`certwatcher: ${this.#certPath} and its key do not load: ${(e as Error).message}`);
      this.#logger.info(
        { err: (e as Error).message },
        'new certificate pair does not load yet; keeping the loaded pair',
      );
      return false;
    }
    const first = this.#pair === undefined;
    this.#pair = { cert, key };
    if (!first) {
      this.reloads++;
      this.#logger.info({ cert: this.#certPath }, 'serving certificate reloaded');
      for (const l of this.#listeners) l(this.#pair);
    }
    return true;
  }

  async start(signal: AbortSignal): Promise<void> {
    await this.reload();
    const dirs = new Set([path.dirname(this.#certPath), path.dirname(this.#keyPath)]);
    const watchers: FSWatcher[] = [];
    const kick = (): void => {
      this.reload().catch(() => {});
    };
    for (const dir of dirs) {
      try {
        const w = watch(dir, { persistent: false }, kick);
        w.on('error', () => {});
        watchers.push(w);
      } catch (e) {
        this.#logger.info(
          { dir, err: (e as Error).message },
          'cannot watch the certificate directory; polling only',
        );
      }
    }
    const timer = this.#pollIntervalMs > 0 ? setInterval(kick, this.#pollIntervalMs) : undefined;
    timer?.unref();
    const stop = (): void => {
      for (const w of watchers) w.close();
      if (timer) clearInterval(timer);
    };
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  }
}
