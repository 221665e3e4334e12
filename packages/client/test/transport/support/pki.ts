// Test PKI: a CA and leaf certificates with chosen SANs, made with @peculiar/x509 on WebCrypto.
import { webcrypto } from 'node:crypto';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

export interface Issued {
  readonly certPem: string;
  readonly keyPem: string;
}

export interface TestCa extends Issued {
  issue(options: {
    dnsNames?: string[];
    ips?: string[];
    client?: boolean;
    commonName?: string;
  }): Promise<Issued>;
}

async function keyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

let serial = 1;
function nextSerial(): string {
  serial += 1;
  return serial.toString(16).padStart(2, '0');
}

/** A fresh self-signed CA that can issue server and client certificates. */
export async function createTestCa(name = 'kubeloop-test-ca'): Promise<TestCa> {
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(Date.now() + 24 * 3600_000);
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: nextSerial(),
    name: `CN=${name}`,
    notBefore,
    notAfter,
    keys,
    signingAlgorithm: alg,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const caKeyPem = await keyPem(keys.privateKey);
  return {
    certPem: caCert.toString('pem'),
    keyPem: caKeyPem,
    async issue({ dnsNames = [], ips = [], client = false, commonName = 'leaf' }) {
      const leafKeys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
      const sans: x509.JsonGeneralName[] = [
        ...dnsNames.map((value) => ({ type: 'dns' as const, value })),
        ...ips.map((value) => ({ type: 'ip' as const, value })),
      ];
      const cert = await x509.X509CertificateGenerator.create({
        serialNumber: nextSerial(),
        subject: `CN=${commonName}`,
        issuer: caCert.subject,
        notBefore,
        notAfter,
        signingKey: keys.privateKey,
        publicKey: leafKeys.publicKey,
        signingAlgorithm: alg,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
          new x509.ExtendedKeyUsageExtension([client ? '1.3.6.1.5.5.7.3.2' : '1.3.6.1.5.5.7.3.1']),
          ...(sans.length > 0 ? [new x509.SubjectAlternativeNameExtension(sans)] : []),
        ],
      });
      return { certPem: cert.toString('pem'), keyPem: await keyPem(leafKeys.privateKey) };
    },
  };
}
