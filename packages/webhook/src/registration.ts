/**
 * What a kind's webhooks register: the paths, rules and settings the generated configurations carry
 * (controller-gen reads the same from kubebuilder's `+kubebuilder:webhook` markers).
 */
import type { Kind, KubeObject } from '@kubeloop/client';
import { parseApiVersion } from '@kubeloop/client/apiutil';
import type { Defaulter, Validator } from './admission/typed.js';
import type { ConvertFunc, HubAndSpoke } from './conversion/conversion.js';
import { guessPlural, mutatePath, validatePath } from './names.js';

/** Admission settings of one registration, as the generated webhook configurations carry them. */
export interface WebhookSettings {
  /** @defaultValue `Fail` */
  readonly failurePolicy?: 'Fail' | 'Ignore';
  /** @defaultValue `None` */
  readonly sideEffects?: 'None' | 'NoneOnDryRun';
  /** Seconds the API server waits (1-30). @defaultValue 10 */
  readonly timeoutSeconds?: number;
  /** @defaultValue `Equivalent` */
  readonly matchPolicy?: 'Equivalent' | 'Exact';
  /** Plural resource name. @defaultValue kubebuilder's guess from the kind */
  readonly plural?: string;
  /** Extra validated operations. @defaultValue CREATE, UPDATE (and DELETE when the validator has `validateDelete`) */
  readonly validateOperations?: readonly ('CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT')[];
  /** @defaultValue `Never` */
  readonly reinvocationPolicy?: 'Never' | 'IfNeeded';
  /** Handler deadline in ms (below `timeoutSeconds`). @defaultValue timeoutSeconds × 1000 − 500 */
  readonly handlerTimeoutMs?: number;
}

/** What one `complete()` registered: read by {@link webhookConfigurations}. */
export interface WebhookRegistration {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly validatePath?: string;
  readonly mutatePath?: string;
  readonly validateOperations: readonly string[];
  readonly convertible: boolean;
  readonly settings: WebhookSettings;
}

/** A kind's webhooks as one value: what {@link defineWebhook} takes and `WebhookBuilder.from` registers. */
export interface WebhookDeclarationOptions<T extends KubeObject = KubeObject> {
  /** The kind the webhooks are for (a `defineKind` kind's `plural` is used for the rules). */
  readonly for: Kind<T>;
  readonly validator?: Validator<T>;
  readonly defaulter?: Defaulter<T>;
  /** Hub and spokes, or a function; served at `/convert`. */
  readonly conversion?: HubAndSpoke | ConvertFunc;
  readonly settings?: WebhookSettings;
}

/**
 * The registration of a kind's webhooks (paths, rules, settings), without a manager.
 * @throws TypeError with nothing to register, or a `timeoutSeconds` outside 1-30.
 */
export function webhookRegistration<T extends KubeObject>(
  o: WebhookDeclarationOptions<T>,
): WebhookRegistration {
  const kind = o.for;
  if (!o.validator && !o.defaulter && !o.conversion)
    throw new TypeError(
      `newWebhookManagedBy(${kind.kind}): no validator, defaulter or conversion to register`,
    );
  const settings = o.settings ?? {};
  const ts = settings.timeoutSeconds ?? 10;
  if (!Number.isInteger(ts) || ts < 1 || ts > 30)
    throw new TypeError(`timeoutSeconds: must be an integer from 1 to 30, got ${ts}`);
  const { group, version } = parseApiVersion(kind.apiVersion);
  const declaredPlural = (kind as { plural?: unknown }).plural;
  return {
    group,
    version,
    kind: kind.kind,
    plural: settings.plural ?? (typeof declaredPlural === 'string' ? declaredPlural : guessPlural(kind.kind)),
    ...(o.validator ? { validatePath: validatePath(kind) } : {}),
    ...(o.defaulter ? { mutatePath: mutatePath(kind) } : {}),
    validateOperations:
      settings.validateOperations ??
      (o.validator?.validateDelete ? ['CREATE', 'UPDATE', 'DELETE'] : ['CREATE', 'UPDATE']),
    convertible: o.conversion !== undefined,
    settings,
  };
}
