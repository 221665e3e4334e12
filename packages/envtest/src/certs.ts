/**
 * The server's PKI: a self-signed CA generated at start, the serving certificate it signs (SANs
 * configurable) and client certificates for certificate authentication. @peculiar/x509 over node's
 * WebCrypto; ECDSA P-256 keys.
 */
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

// Node's WebCrypto, passed to every @peculiar/x509 call that needs one, instead of setting the library's global
// provider at import time (importing this package has no side effects: package.json says `sideEffects: false`).
const CRYPTO = webcrypto as unknown as Parameters<typeof x509.X509CertificateGenerator.create>[1];

type KeyPair = webcrypto.CryptoKeyPair;

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 3600 * 1000;

/** A certificate and its private key, PEM encoded. */
export interface CertificatePair {
  readonly certPem: string;
  /** PKCS#8 PEM private key. Secret. */
  readonly keyPem: string;
}

async function keyPem(key: webcrypto.CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

function serial(): string {
  const b = webcrypto.getRandomValues(new Uint8Array(16));
  b[0] = (b[0]! & 0x7f) | 0x01;
  return Buffer.from(b).toString('hex');
}

function isIp(s: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(s) || s.includes(':');
}

/** A certificate authority able to issue serving and client certificates. */
export class CertificateAuthority {
  readonly certPem: string;
  readonly #cert: x509.X509Certificate;
  readonly #keys: KeyPair;

  private constructor(cert: x509.X509Certificate, keys: KeyPair) {
    this.#cert = cert;
    this.#keys = keys;
    this.certPem = cert.toString('pem');
  }

  /** Generate a fresh self-signed CA (valid 10 years, CN `kubeloop-envtest-ca`). */
  static async create(commonName = 'kubeloop-envtest-ca'): Promise<CertificateAuthority> {
    const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as KeyPair;
    const now = Date.now();
    const cert = await x509.X509CertificateGenerator.createSelfSigned(
      {
        serialNumber: serial(),
        name: new x509.Name([{ CN: [commonName] }]),
        notBefore: new Date(now - DAY_MS),
        notAfter: new Date(now + 3650 * DAY_MS),
        keys,
        signingAlgorithm: ALG,
        extensions: [
          new x509.BasicConstraintsExtension(true, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
          await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, CRYPTO),
        ],
      },
      CRYPTO,
    );
    return new CertificateAuthority(cert, keys);
  }

  async #issue(
    subject: x509.Name,
    usage: 'server' | 'client',
    sans: readonly string[],
  ): Promise<CertificatePair> {
    const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as KeyPair;
    const now = Date.now();
    const extensions: x509.Extension[] = [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
        true,
      ),
      new x509.ExtendedKeyUsageExtension([
        usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth,
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(this.#keys.publicKey, false, CRYPTO),
    ];
    if (sans.length > 0)
      extensions.push(
        new x509.SubjectAlternativeNameExtension(
          sans.map((s) => (isIp(s) ? { type: 'ip', value: s } : { type: 'dns', value: s })),
        ),
      );
    const cert = await x509.X509CertificateGenerator.create(
      {
        serialNumber: serial(),
        subject,
        issuer: this.#cert.subject,
        notBefore: new Date(now - DAY_MS),
        notAfter: new Date(now + 365 * DAY_MS),
        signingKey: this.#keys.privateKey,
        publicKey: keys.publicKey,
        signingAlgorithm: ALG,
        extensions,
      },
      CRYPTO,
    );
    return { certPem: cert.toString('pem'), keyPem: await keyPem(keys.privateKey) };
  }

  /** A serving certificate whose SANs are exactly `sans` (IP addresses or DNS names). */
  issueServing(sans: readonly string[]): Promise<CertificatePair> {
    return this.#issue(new x509.Name([{ CN: ['kube-apiserver'] }]), 'server', sans);
  }

  /** A client certificate: CN = user, O = groups (how kube-apiserver maps x509 client certs to users). */
  issueClient(user: string, groups: readonly string[] = []): Promise<CertificatePair> {
    const name: x509.JsonName = [{ CN: [user] }];
    if (groups.length > 0) name.push({ O: [...groups] });
    return this.#issue(new x509.Name(name), 'client', []);
  }
}
