import { X509Certificate } from 'node:crypto';

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * Why `text` cannot serve as a bundle of root certificates, or `undefined` when it can: it must hold at
 * least one PEM `CERTIFICATE` block, and every such block must parse as X.509. client-go refuses the same
 * inputs when it builds its TLS config (`certutil.NewPoolFromBytes`: "unable to parse bytes as PEM block").
 */
export function invalidCertificateBundle(text: string): string | undefined {
  const blocks = text.match(CERTIFICATE_BLOCK);
  if (!blocks || blocks.length === 0) {
    return text.trim() === '' ? 'is empty, want PEM certificates' : 'holds no PEM certificate block';
  }
  for (let i = 0; i < blocks.length; i++) {
    try {
      new X509Certificate(blocks[i] as string);
    } catch {
      return `PEM block ${i + 1} is not a valid X.509 certificate`;
    }
  }
  return undefined;
}
