import { inspect } from 'node:util';
import type { RestConfig } from './rest-config.js';

const REDACTED = '--- REDACTED ---';

/** A copy of `config` with every secret (token, password, key, exec env values) replaced by a marker. */
export function redactedRestConfig(config: RestConfig): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  if (config.bearerToken) out.bearerToken = REDACTED;
  if (config.password) out.password = REDACTED;
  const tls: Record<string, unknown> = { ...config.tlsClientConfig };
  if (tls.keyData) tls.keyData = REDACTED;
  if (tls.certData) tls.certData = '<PEM>';
  if (tls.caData) tls.caData = '<PEM>';
  out.tlsClientConfig = tls;
  if (config.execProvider?.env) {
    out.execProvider = {
      ...config.execProvider,
      env: config.execProvider.env.map((e) => ({ name: e.name, value: REDACTED })),
    };
  }
  if (config.authProvider) {
    out.authProvider = { name: config.authProvider.name, config: REDACTED };
  }
  if (config.proxyUrl) {
    try {
      const u = new URL(config.proxyUrl);
      if (u.password) u.password = 'REDACTED';
      out.proxyUrl = u.toString();
    } catch {
      out.proxyUrl = REDACTED;
    }
  }
  return out;
}

/**
 * Give `config` (in place) non-enumerable `toString`, `toJSON` and `util.inspect.custom` that redact
 * secrets, as client-go's `rest.Config.String`/`GoString` do. Returns the same object, frozen.
 */
export function withRedaction<T extends RestConfig>(config: T): T {
  Object.defineProperties(config, {
    toString: { value: () => `RestConfig ${JSON.stringify(redactedRestConfig(config))}`, enumerable: false },
    toJSON: { value: () => redactedRestConfig(config), enumerable: false },
    [inspect.custom]: {
      value: (depth: number, options: Parameters<typeof inspect>[1]) =>
        `RestConfig ${inspect(redactedRestConfig(config), { ...options, depth })}`,
      enumerable: false,
    },
  });
  return Object.freeze(config);
}
