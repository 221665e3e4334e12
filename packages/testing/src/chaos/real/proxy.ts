/**
 * A TCP proxy in front of an API server that makes the network faults clients meet in production: connections
 * reset (RST) or closed (FIN) under them, every byte delayed, and a partition (bytes stop flowing both ways and
 * new connections hang) that later heals. It forwards bytes only, so TLS runs end to end between the client
 * and the server and the server's certificate must name the proxy's address (loopback).
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';

/** Options of {@link FaultProxy.start}. */
export interface FaultProxyOptions {
  /** Where to forward: the server's host (default `127.0.0.1`). */
  readonly targetHost?: string;
  /** The server's TCP port. */
  readonly targetPort: number;
  /** Port to listen on, on 127.0.0.1 (default 0: a free one). */
  readonly port?: number;
}

interface Pipe {
  readonly client: Socket;
  readonly upstream: Socket;
}

/**
 * The proxy. Every fault acts at once on the connections open now and, for the lasting ones (delay,
 * partition), on the connections made while it lasts.
 */
export class FaultProxy {
  readonly #server: Server;
  readonly #pipes = new Set<Pipe>();
  readonly #targetHost: string;
  readonly #targetPort: number;
  #delayMs = 0;
  #partitioned = false;
  /** Connections accepted during a partition, connected upstream when it heals. */
  readonly #held: Socket[] = [];
  #connections = 0;

  private constructor(server: Server, targetHost: string, targetPort: number) {
    this.#server = server;
    this.#targetHost = targetHost;
    this.#targetPort = targetPort;
  }

  /**
   * Listen on 127.0.0.1 and forward every connection to the target.
   * @throws the listen error (e.g. EADDRINUSE for a fixed `port`).
   */
  static async start(options: FaultProxyOptions): Promise<FaultProxy> {
    const server = createServer();
    const proxy = new FaultProxy(server, options.targetHost ?? '127.0.0.1', options.targetPort);
    server.on('connection', (s) => proxy.#accept(s));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return proxy;
  }

  /** The port the proxy listens on (127.0.0.1). */
  get port(): number {
    return (this.#server.address() as { port: number }).port;
  }

  /** Connections open now. */
  get openConnections(): number {
    return this.#pipes.size + this.#held.length;
  }

  /** Connections accepted since start. */
  get acceptedConnections(): number {
    return this.#connections;
  }

  /** Whether a partition is in force. */
  get partitioned(): boolean {
    return this.#partitioned;
  }

  #accept(client: Socket): void {
    this.#connections++;
    client.on('error', () => {});
    if (this.#partitioned) {
      // As a SYN that gets through to a host that then hears nothing: the client's connection is open and
      // silent until the partition heals.
      client.pause();
      this.#held.push(client);
      client.once('close', () => {
        const i = this.#held.indexOf(client);
        if (i >= 0) this.#held.splice(i, 1);
      });
      return;
    }
    this.#connect(client);
  }

  #connect(client: Socket): void {
    const upstream = tcpConnect({ host: this.#targetHost, port: this.#targetPort });
    upstream.on('error', () => {});
    const pipe: Pipe = { client, upstream };
    this.#pipes.add(pipe);
    this.#forward(client, upstream);
    this.#forward(upstream, client);
    const close = () => {
      if (!this.#pipes.delete(pipe)) return;
      // one side closed: the other goes the same way (a reset stays a reset)
      if (client.destroyed || upstream.destroyed) {
        client.destroy();
        upstream.destroy();
      }
    };
    client.once('close', close);
    upstream.once('close', close);
    client.once('end', () => upstream.end());
    upstream.once('end', () => client.end());
    if (this.#partitioned) this.#pause(pipe);
    else client.resume();
  }

  /** Copies `from` to `to` in order, each chunk `delayMs` late while a delay is in force. */
  #forward(from: Socket, to: Socket): void {
    let last = 0;
    from.on('data', (chunk: Buffer) => {
      if (this.#delayMs === 0 && last <= Date.now()) {
        if (!to.write(chunk)) {
          from.pause();
          to.once('drain', () => {
            if (!this.#partitioned) from.resume();
          });
        }
        return;
      }
      const at = Math.max(Date.now() + this.#delayMs, last);
      last = at;
      setTimeout(() => {
        if (!to.destroyed) to.write(chunk);
      }, at - Date.now()).unref();
    });
  }

  #pause(p: Pipe): void {
    p.client.pause();
    p.upstream.pause();
  }

  /** Resets (TCP RST) every open connection, as a middlebox or a crashed peer does. @returns how many. */
  resetAll(): number {
    const n = this.openConnections;
    for (const p of this.#pipes) {
      p.client.resetAndDestroy();
      p.upstream.resetAndDestroy();
    }
    for (const s of this.#held.splice(0)) s.resetAndDestroy();
    this.#pipes.clear();
    return n;
  }

  /** Closes (TCP FIN) every open connection, as a load balancer that drains its backends. @returns how many. */
  dropAll(): number {
    const n = this.openConnections;
    for (const p of this.#pipes) {
      p.client.end();
      p.upstream.end();
      p.client.destroySoon();
      p.upstream.destroySoon();
    }
    for (const s of this.#held.splice(0)) s.end();
    this.#pipes.clear();
    return n;
  }

  /** Delays every byte by `ms` **milliseconds** from now on (0: no delay); order is kept. */
  setDelay(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0)
      throw new RangeError(`delay must be a non-negative number of ms, got ${ms}`);
    this.#delayMs = ms;
  }

  /**
   * Partitions the proxy's clients from the server: bytes stop flowing both ways on every connection and new
   * connections are accepted but hear nothing, until {@link FaultProxy.heal}. Nothing is lost that TCP would
   * keep: what was sent is delivered after the heal, as after a partition shorter than TCP's timeouts.
   */
  partition(): void {
    this.#partitioned = true;
    for (const p of this.#pipes) this.#pause(p);
  }

  /** Ends a partition: paused connections flow again and held ones are connected. */
  heal(): void {
    if (!this.#partitioned) return;
    this.#partitioned = false;
    for (const p of this.#pipes) {
      p.client.resume();
      p.upstream.resume();
    }
    for (const s of this.#held.splice(0)) if (!s.destroyed) this.#connect(s);
  }

  /** Ends every fault: no delay, no partition. */
  clear(): void {
    this.setDelay(0);
    this.heal();
  }

  /** Stops listening and resets every connection. */
  async close(): Promise<void> {
    this.clear();
    this.resetAll();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
