// Small proxies on 127.0.0.1:0 for tests: an HTTP CONNECT proxy and a no-auth SOCKS5 proxy, each
// counting the tunnels it opened.
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';

export interface TestProxy {
  readonly url: string;
  /** `host:port` of every tunnel asked for, in order. */
  readonly tunnels: string[];
  close(): Promise<void>;
}

function tunnel(client: net.Socket, host: string, port: number, onOpen: () => void): void {
  const upstream = net.connect(port, host, () => {
    onOpen();
    upstream.pipe(client);
    client.pipe(upstream);
  });
  upstream.on('error', () => client.destroy());
  client.on('error', () => upstream.destroy());
}

/** An HTTP proxy that only supports CONNECT (what clients use for https:// targets). */
export async function startConnectProxy(): Promise<TestProxy> {
  const tunnels: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((_req, res) => {
    res.writeHead(405);
    res.end();
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    const target = req.url ?? '';
    tunnels.push(target);
    const idx = target.lastIndexOf(':');
    tunnel(client, target.slice(0, idx), Number(target.slice(idx + 1)), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) client.unshift(head);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tunnels,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A SOCKS5 proxy (RFC 1928) without authentication, CONNECT only. */
export async function startSocks5Proxy(): Promise<TestProxy> {
  const tunnels: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    let stage: 'greeting' | 'request' | 'done' = 'greeting';
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (stage === 'greeting') {
        if (buf.length < 2 || buf.length < 2 + (buf[1] ?? 0)) return;
        buf = buf.subarray(2 + (buf[1] ?? 0));
        client.write(Buffer.from([0x05, 0x00]));
        stage = 'request';
      }
      if (stage === 'request') {
        if (buf.length < 5) return;
        const atyp = buf[3];
        let host: string;
        let end: number;
        if (atyp === 0x01) {
          if (buf.length < 10) return;
          host = [...buf.subarray(4, 8)].join('.');
          end = 8;
        } else if (atyp === 0x03) {
          const len = buf[4] ?? 0;
          if (buf.length < 5 + len + 2) return;
          host = buf.subarray(5, 5 + len).toString('utf8');
          end = 5 + len;
        } else {
          client.end(Buffer.from([0x05, 0x08, 0x00, 0x01, 0, 0, 0, 0, 0, 0]));
          return;
        }
        const port = buf.readUInt16BE(end);
        const rest = buf.subarray(end + 2);
        stage = 'done';
        client.off('data', onData);
        tunnels.push(`${host}:${port}`);
        tunnel(client, host, port, () => {
          client.write(Buffer.from([0x05, 0x00, 0x00, 0x01, 127, 0, 0, 1, 0, 0]));
          if (rest.length > 0) client.unshift(rest);
        });
      }
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `socks5://127.0.0.1:${port}`,
    tunnels,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
