/**
 * A CA and serving certificates for the self-signed mode, made with @peculiar/x509 over node's WebCrypto
 * (ECDSA P-256): no hand-written ASN.1.
 */
import { webcrypto, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';

const CRYPTO = webcrypto as unknown as Parameters<typeof x509.X509CertificateGenerator.create>[1];
const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** PEM certificate and PKCS#8 PEM key (secret). */
export interface PemPair {
  readonly cert: string;
  readonly key: string;
}

function serialNumber(): string {
  const b = webcrypto.getRandomValues(new Uint8Array(16));
  b[0] = ((b[0] as number) & 0x7f) | 0x01;
  return Buffer.from(b).toString('hex');
}

async function exportKey(key: webcrypto.CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

async function importKey(pem: string): Promise<webcrypto.CryptoKey> {
  const der = x509.PemConverter.decode(pem)[0];
  if (!der) throw new Error('CA key: no PEM block');
  return webcrypto.subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign']);
}

/** A self-signed CA valid from `notBefore` to `notAfter`. */
export async function createCA(commonName: string, notBefore: Date, notAfter: Date): Promise<PemPair> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: serialNumber(),
      name: new x509.Name([{ CN: [commonName] }]),
      notBefore,
      notAfter,
      keys,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, CRYPTO),
      ],
    },
    CRYPTO,
  );
  return { cert: cert.toString('pem'), key: await exportKey(keys.privateKey) };
}

/** A serving certificate for `names` (DNS names or IP addresses) signed by `ca`. */
export async function issueServing(
  ca: PemPair,
  names: readonly string[],
  notBefore: Date,
  notAfter: Date,
): Promise<PemPair> {
  const caCert = new x509.X509Certificate(ca.cert);
  const caKey = await importKey(ca.key);
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const isIp = (s: string): boolean => /^\d{1,3}(\.\d{1,3}){3}$/.test(s) || s.includes(':');
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: serialNumber(),
      subject: new x509.Name([{ CN: [names[0] ?? 'webhook'] }]),
      issuer: caCert.subject,
      notBefore,
      notAfter,
      signingKey: caKey,
      publicKey: keys.publicKey,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        await x509.AuthorityKeyIdentifierExtension.create(caCert, false, CRYPTO),
        new x509.SubjectAlternativeNameExtension(
          names.map((n) =>
            isIp(n) ? { type: 'ip' as const, value: n } : { type: 'dns' as const, value: n },
          ),
        ),
      ],
    },
    CRYPTO,
  );
  return { cert: cert.toString('pem'), key: await exportKey(keys.privateKey) };
}

/** Validity window of a PEM certificate (the first in the text), in ms since the epoch. */
export function validity(pem: string): { notBefore: number; notAfter: number } {
  const c = new x509.X509Certificate(pem);
  return { notBefore: c.notBefore.getTime(), notAfter: c.notAfter.getTime() };
}

/** Whether the certificate `pem` (the first in the text) names every one of `names` (DNS names, IP addresses) in its SANs. */
export function coversNames(pem: string, names: readonly string[]): boolean {
  const c = new X509Certificate(pem);
  return names.every((n) =>
    isIP(n)
      ? c.checkIP(n) !== undefined
      : c.checkHost(n, { subject: 'never', wildcards: false }) !== undefined,
  );
}

/** The PEM certificates in a bundle, in order. */
export function splitPem(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g) ?? [];
}

/** The DNS names of a Service: `name`, `name.ns`, `name.ns.svc`, `name.ns.svc.cluster.local`. */
export function serviceDNSNames(name: string, namespace: string, clusterDomain = 'cluster.local'): string[] {
  return [
    name,
    `${name}.${namespace}`,
    `${name}.${namespace}.svc`,
    `${name}.${namespace}.svc.${clusterDomain}`,
  ];
}
