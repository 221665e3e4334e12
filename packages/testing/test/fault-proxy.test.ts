// The chaos harness's TCP fault proxy, against a local echo server: it forwards bytes, resets and closes
// connections, delays bytes in order, and holds bytes (both ways, and new connections) during a partition.
import { once } from 'node:events';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaultProxy } from '../src/index.js';

let echo: Server;
let echoPort = 0;
const proxies: FaultProxy[] = [];

beforeAll(async () => {
  echo = createServer((s) => {
    s.on('error', () => {});
    s.pipe(s);
  });
  echo.listen(0, '127.0.0.1');
  await once(echo, 'listening');
  echoPort = (echo.address() as { port: number }).port;
});
afterAll(async () => {
  for (const p of proxies) await p.close();
  await new Promise<void>((r) => echo.close(() => r()));
});

async function proxy(): Promise<FaultProxy> {
  const p = await FaultProxy.start({ targetPort: echoPort });
  proxies.push(p);
  return p;
}

/** A client on the proxy that collects what it reads and how it ended. */
async function client(p: FaultProxy): Promise<{
  s: Socket;
  received: () => string;
  ended: Promise<string>;
}> {
  const s = tcpConnect({ host: '127.0.0.1', port: p.port });
  let data = '';
  s.on('data', (d: Buffer) => {
    data += d.toString();
  });
  const ended = new Promise<string>((resolve) => {
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    s.on('end', () => resolve('end'));
  });
  await once(s, 'connect');
  return { s, received: () => data, ended };
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('FaultProxy', () => {
  it('forwards bytes both ways', async () => {
    const p = await proxy();
    const c = await client(p);
    c.s.write('hello');
    await until(() => c.received() === 'hello', 'the echo');
    expect(p.openConnections).toBe(1);
    c.s.destroy();
  });

  it('resetAll resets every open connection (the client sees ECONNRESET); dropAll closes them (the client sees the end)', async () => {
    const p = await proxy();
    const a = await client(p);
    a.s.write('x');
    await until(() => a.received() === 'x', 'the echo');
    expect(p.resetAll()).toBe(1);
    expect(await a.ended).toBe('ECONNRESET');
    const b = await client(p);
    b.s.write('y');
    await until(() => b.received() === 'y', 'the echo after a reset');
    expect(p.dropAll()).toBe(1);
    expect(await b.ended).toBe('end');
  });

  it('a partition holds bytes both ways and new connections until it heals; then everything arrives in order', async () => {
    const p = await proxy();
    const a = await client(p);
    a.s.write('1');
    await until(() => a.received() === '1', 'the echo');
    p.partition();
    expect(p.partitioned).toBe(true);
    a.s.write('2');
    const b = await client(p);
    b.s.write('b');
    // nothing comes back while partitioned (the echo is immediate when connected)
    await new Promise((r) => setTimeout(r, 200));
    expect(a.received()).toBe('1');
    expect(b.received()).toBe('');
    p.heal();
    await until(() => a.received() === '12' && b.received() === 'b', 'the held bytes after the heal');
    a.s.destroy();
    b.s.destroy();
  });

  it('setDelay delays bytes and keeps their order; 0 ends the delay', async () => {
    const p = await proxy();
    const c = await client(p);
    p.setDelay(50);
    for (const ch of 'abcdef') c.s.write(ch);
    await until(() => c.received().length === 6, 'the delayed echo');
    expect(c.received()).toBe('abcdef');
    p.setDelay(0);
    c.s.write('g');
    await until(() => c.received() === 'abcdefg', 'the echo without delay');
    expect(() => p.setDelay(-1)).toThrow(RangeError);
    c.s.destroy();
  });
});
