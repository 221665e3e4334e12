/** The `users[…]` entry of a kubeconfig: tokens, basic auth, client certificates, auth providers, exec, impersonation. */
import { KubeconfigError } from '../errors.js';
import type { Env } from '../options.js';
import type { AuthProviderConfig, ExecConfig, ImpersonationConfig } from '../rest-config.js';
import { execConfigOf } from './exec-config.js';
import { base64Text, readReferenced, str } from './fields.js';
import type { RawUser } from './kubeconfig-files.js';

/** What a user entry contributes to a `RestConfig`. */
export interface UserPart {
  bearerToken?: string;
  bearerTokenFile?: string;
  username?: string;
  password?: string;
  execProvider?: ExecConfig;
  authProvider?: AuthProviderConfig;
  impersonate?: ImpersonationConfig;
  certData?: string;
  keyData?: string;
  certFile?: string;
  keyFile?: string;
}

/** Read a user entry. @throws {KubeconfigError} naming the file, entry and field of the first problem. */
export function userOf(u: RawUser, file: string, at: string, env: Env, clusterConfig: unknown): UserPart {
  const out: UserPart = {};
  const token = str(u.token, file, `${at}.token`);
  const tokenFile =
    str(u.tokenFile, file, `${at}.tokenFile`) ?? str(u['token-file'], file, `${at}.token-file`);
  const username = str(u.username, file, `${at}.username`);
  const password = str(u.password, file, `${at}.password`);
  if ((token || tokenFile) && (username || password)) {
    throw new KubeconfigError(
      'ConflictingFields',
      'username/password or bearer token may be set, but not both',
      {
        file,
        field: at,
      },
    );
  }
  if (token) out.bearerToken = token.trim();
  if (tokenFile) out.bearerTokenFile = tokenFile;
  if (username) out.username = username;
  if (password) out.password = password;

  const certInline = base64Text(u['client-certificate-data'], file, `${at}.client-certificate-data`);
  const keyInline = base64Text(u['client-key-data'], file, `${at}.client-key-data`);
  const certFile = str(u['client-certificate'], file, `${at}.client-certificate`);
  const keyFile = str(u['client-key'], file, `${at}.client-key`);
  const certData =
    certInline ?? (certFile ? readReferenced(certFile, file, `${at}.client-certificate`) : undefined);
  const keyData = keyInline ?? (keyFile ? readReferenced(keyFile, file, `${at}.client-key`) : undefined);
  if (certData && !keyData) {
    throw new KubeconfigError(
      'InvalidEntry',
      'client-key-data or client-key must be given with a client certificate',
      {
        file,
        field: `${at}.client-key`,
      },
    );
  }
  if (keyData && !certData) {
    throw new KubeconfigError(
      'InvalidEntry',
      'client-certificate-data or client-certificate must be given with a key',
      {
        file,
        field: `${at}.client-certificate`,
      },
    );
  }
  if (certData && keyData) {
    out.certData = certData;
    out.keyData = keyData;
    if (!certInline && !keyInline && certFile && keyFile) {
      out.certFile = certFile;
      out.keyFile = keyFile;
    }
  }

  const ap = u['auth-provider'];
  if (ap !== undefined && ap !== null) {
    const a = ap as Record<string, unknown>;
    const name = str(a.name, file, `${at}.auth-provider.name`);
    if (name !== 'oidc') {
      throw new KubeconfigError(
        'UnsupportedAuthProvider',
        `auth provider "${name ?? ''}" was removed upstream; use an exec credential plugin instead`,
        { file, field: `${at}.auth-provider.name` },
      );
    }
    const config: Record<string, string> = {};
    if (a.config && typeof a.config === 'object') {
      for (const [k, v] of Object.entries(a.config as Record<string, unknown>)) {
        if (typeof v === 'string') config[k] = v;
      }
    }
    out.authProvider = { name, config };
  }
  if (u.exec !== undefined && u.exec !== null) {
    if (out.authProvider) {
      throw new KubeconfigError('ConflictingFields', 'auth-provider cannot be combined with an exec plugin', {
        file,
        field: at,
      });
    }
    out.execProvider = execConfigOf(u.exec, file, `${at}.exec`, env, clusterConfig);
  }

  const as = str(u.as, file, `${at}.as`);
  const asUid = str(u['as-uid'], file, `${at}.as-uid`);
  const groupsRaw = u['as-groups'];
  const extraRaw = u['as-user-extra'];
  const impersonate: {
    userName?: string;
    uid?: string;
    groups?: string[];
    extra?: Record<string, string[]>;
  } = {};
  if (as) impersonate.userName = as;
  if (asUid) impersonate.uid = asUid;
  if (groupsRaw !== undefined && groupsRaw !== null) {
    if (!Array.isArray(groupsRaw) || groupsRaw.some((g) => typeof g !== 'string')) {
      throw new KubeconfigError('InvalidEntry', 'must be a list of strings', {
        file,
        field: `${at}.as-groups`,
      });
    }
    if (groupsRaw.length > 0) impersonate.groups = groupsRaw as string[];
  }
  if (extraRaw !== undefined && extraRaw !== null) {
    if (typeof extraRaw !== 'object' || Array.isArray(extraRaw)) {
      throw new KubeconfigError('InvalidEntry', 'must be a map of string lists', {
        file,
        field: `${at}.as-user-extra`,
      });
    }
    const extra: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(extraRaw as Record<string, unknown>)) {
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
        throw new KubeconfigError('InvalidEntry', 'must be a list of strings', {
          file,
          field: `${at}.as-user-extra.${k}`,
        });
      }
      extra[k] = v as string[];
    }
    if (Object.keys(extra).length > 0) impersonate.extra = extra;
  }
  if ((impersonate.uid || impersonate.groups || impersonate.extra) && !impersonate.userName) {
    throw new KubeconfigError('InvalidEntry', 'impersonating groups, uid or extra requires a user (as)', {
      file,
      field: `${at}.as`,
    });
  }
  if (Object.keys(impersonate).length > 0) out.impersonate = impersonate;
  return out;
}
