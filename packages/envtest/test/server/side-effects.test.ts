import { cryptoProvider } from '@peculiar/x509';
import { expect, it } from 'vitest';

it('importing the package sets no global @peculiar/x509 crypto provider, and certificates use WebCrypto explicitly', async () => {
  const before = cryptoProvider.get();
  // a provider that fails on use: if envtest relied on (or replaced) the global one, this test would see it
  const poisoned = {
    subtle: new Proxy({}, { get: () => () => Promise.reject(new Error('global provider used')) }),
    getRandomValues: () => {
      throw new Error('global provider used');
    },
  } as unknown as Parameters<typeof cryptoProvider.set>[0];
  cryptoProvider.set(poisoned);
  try {
    const { startApiServer } = await import('../../src/index.js');
    expect(cryptoProvider.get()).toBe(poisoned);
    const server = await startApiServer();
    try {
      const pair = await server.issueClientCertificate('alice', ['devs']);
      expect(pair.certPem).toContain('BEGIN CERTIFICATE');
      expect(cryptoProvider.get()).toBe(poisoned);
    } finally {
      await server.stop();
    }
  } finally {
    if (before) cryptoProvider.set(before);
  }
});
