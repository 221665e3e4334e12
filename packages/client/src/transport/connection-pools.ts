/**
 * The connection pools of one {@link Transport}: the shared pool, a pool per exec client certificate, and the
 * pools retired by a TLS file or certificate rotation, all tracked until closed so that a forced close
 * reaches every request in flight (client-go's transport cache, CA rotation and connection tracking).
 */
import type { RequestCredentials } from '@kubeloop/config';
import { createPool, type Pool, type PoolSpec } from './dispatcher.js';
import { TransportError } from './errors.js';
import type { TlsFiles } from './tls-files.js';

/** What every pool of a transport is built from, but the PEMs. */
export type PoolBase = Omit<PoolSpec, 'pem'>;

/** The pools of one transport. Not exported from the package. */
export class ConnectionPools {
  readonly #base: PoolBase;
  readonly #tls: TlsFiles;
  readonly #warn: (message: string) => void;
  /** Every pool not closed yet. */
  readonly #owned = new Set<Pool>();
  #pool: Promise<Pool> | undefined;
  #certPool: { certData: string; pool: Promise<Pool> } | undefined;
  #closed = false;

  constructor(base: PoolBase, tls: TlsFiles, warn: (message: string) => void) {
    this.#base = base;
    this.#tls = tls;
    this.#warn = warn;
  }

  /** Whether {@link close} has been called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The shared pool once it has connected, else undefined. */
  async shared(): Promise<Pool | undefined> {
    return this.#pool ? this.#pool.catch(() => undefined) : undefined;
  }

  /**
   * The pool for a request with `creds`: the shared one, or the one of the exec client certificate. Re-read
   * TLS files (at most once per reload interval) first; new PEMs or a rotated certificate get a new pool and
   * the old one closes once its requests finish.
   * @throws {TransportError} `ConnectionFailed` once closed; what creating the pool throws.
   */
  async forCredentials(creds: RequestCredentials): Promise<Pool> {
    if (await this.#tls.maybeReload()) {
      // New PEMs: new requests go to a new pool, the old one closes once idle (client-go's CA rotation).
      const old = this.#pool;
      this.#pool = undefined;
      this.#retire(old);
      this.#warn('TLS files changed; new connections use them');
    }
    const cert = creds.clientCertificate;
    if (!cert) {
      if (!this.#pool) {
        const pool = this.#newPool(this.#tls.pem);
        this.#pool = pool;
        // A failed connection (the ALPN probe) is not remembered: the next request tries again.
        pool.catch(() => {
          if (this.#pool === pool) this.#pool = undefined;
        });
      }
      return this.#pool;
    }
    if (this.#certPool?.certData !== cert.certData) {
      // A rotated exec client certificate: new connections with it, the old pool is closed (client-go
      // closes tracked connections on rotation).
      const old = this.#certPool?.pool;
      this.#certPool = {
        certData: cert.certData,
        pool: this.#newPool({ ...this.#tls.pem, certData: cert.certData, keyData: cert.keyData }),
      };
      this.#retire(old);
    }
    return this.#certPool.pool;
  }

  /** A new pool, tracked for close(); refused once closed. */
  #newPool(pem: PoolSpec['pem']): Promise<Pool> {
    if (this.#closed) return Promise.reject(new TransportError('ConnectionFailed', 'transport is closed'));
    const p = createPool({ ...this.#base, pem }).then((pool) => {
      if (this.#closed) {
        void pool.close(true).catch(() => undefined);
        throw new TransportError('ConnectionFailed', 'transport is closed');
      }
      this.#owned.add(pool);
      return pool;
    });
    p.catch(() => undefined);
    return p;
  }

  /**
   * Closes a replaced pool once its requests finish; it stays in `#owned` until then, so a forced
   * `close()` still destroys what it carries.
   */
  #retire(pool: Promise<Pool> | undefined): void {
    void pool
      ?.then(async (p) => {
        await p.close();
        this.#owned.delete(p);
      })
      .catch(() => undefined);
  }

  /** Closes every pool (see `Transport.close`); `force` destroys their connections at once. */
  async close(options: { force?: boolean } = {}): Promise<void> {
    if (this.#closed && !options.force) return;
    this.#closed = true;
    const pending = [this.#pool, this.#certPool?.pool].filter((p) => p !== undefined);
    await Promise.all(pending.map((p) => p.catch(() => undefined)));
    const owned = [...this.#owned];
    await Promise.all(owned.map((p) => p.close(options.force).catch(() => undefined)));
    for (const p of owned) this.#owned.delete(p);
  }
}
