/** The `clusters[…]` entry of a kubeconfig: server URL, TLS, proxy and the exec extension. */
import { KubeconfigError } from '../errors.js';
import type { TLSClientConfig } from '../rest-config.js';
import { base64Text, bool, readReferenced, str } from './fields.js';
import type { RawCluster } from './kubeconfig-files.js';
import { invalidCertificateBundle } from './pem.js';

/**
 * TLS settings of a cluster entry. The CA (file or inline data) must be a PEM bundle of X.509
 * certificates: an empty file or one without a certificate is refused here, naming the field, rather than
 * failing later on every request as "unable to verify the first certificate" (client-go refuses it when it
 * builds the transport).
 */
export function clusterTls(c: RawCluster, file: string, at: string): TLSClientConfig {
  const insecure = bool(c['insecure-skip-tls-verify'], file, `${at}.insecure-skip-tls-verify`);
  const caFile = str(c['certificate-authority'], file, `${at}.certificate-authority`);
  const caInline = base64Text(c['certificate-authority-data'], file, `${at}.certificate-authority-data`);
  if (insecure && (caFile || caInline)) {
    throw new KubeconfigError(
      'ConflictingFields',
      'certificate-authority and insecure-skip-tls-verify are mutually exclusive (a root CA with the insecure flag is not allowed)',
      { file, field: at },
    );
  }
  const caField = caInline !== undefined ? `${at}.certificate-authority-data` : `${at}.certificate-authority`;
  const caData =
    caInline ?? (caFile ? readReferenced(caFile, file, `${at}.certificate-authority`) : undefined);
  if (caData !== undefined) {
    const invalid = invalidCertificateBundle(caData);
    if (invalid) {
      const what = caInline !== undefined ? 'the data' : caFile;
      throw new KubeconfigError('InvalidCertificate', `${what} ${invalid}`, { file, field: caField });
    }
  }
  const serverName = str(c['tls-server-name'], file, `${at}.tls-server-name`);
  return {
    ...(caData ? { caData } : {}),
    ...(caData && !caInline && caFile ? { caFile } : {}),
    ...(serverName ? { serverName } : {}),
    ...(insecure ? { insecure } : {}),
  };
}

/** The server URL: a missing scheme means https; a path is kept as prefix; query and fragment dropped. */
export function normaliseServer(raw: string | undefined, file: string, field: string): string {
  if (!raw) throw new KubeconfigError('InvalidServer', 'no server defined', { file, field });
  const withScheme = raw.includes('://') ? raw : `https://${raw}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw new KubeconfigError('InvalidServer', 'not a valid URL', { file, field });
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') {
    throw new KubeconfigError('InvalidServer', `unsupported scheme "${u.protocol.slice(0, -1)}"`, {
      file,
      field,
    });
  }
  // client-go keeps a path as prefix and strips query and fragment.
  const prefix = u.pathname.replace(/\/+$/, '');
  return `${u.protocol}//${u.host}${prefix}`;
}

/** `proxy-url`: http, https or socks5 (client-go's accepted schemes). */
export function proxyUrlOf(raw: string | undefined, file: string, field: string): string | undefined {
  if (!raw) return undefined;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new KubeconfigError('InvalidProxyUrl', 'not a valid URL', { file, field });
  }
  if (!['http:', 'https:', 'socks5:'].includes(u.protocol)) {
    throw new KubeconfigError(
      'InvalidProxyUrl',
      `unsupported scheme "${u.protocol.slice(0, -1)}", must be http, https, or socks5`,
      { file, field },
    );
  }
  return raw;
}

/** The `client.authentication.k8s.io/exec` extension of a cluster, handed to exec plugins as `spec.cluster.config`. */
export function execClusterExtension(c: RawCluster): unknown {
  if (!Array.isArray(c.extensions)) return undefined;
  for (const e of c.extensions) {
    if (
      e &&
      typeof e === 'object' &&
      (e as Record<string, unknown>).name === 'client.authentication.k8s.io/exec'
    ) {
      return (e as Record<string, unknown>).extension;
    }
  }
  return undefined;
}
