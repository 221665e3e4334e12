/**
 * `newWebhookManagedBy(mgr).for(Widget).withValidator(v).withDefaulter(d).withConversion(c).complete()`
 * (controller-runtime `builder.WebhookManagedBy`), and the manager's one webhook server.
 */
import type { Manager } from '@kubeloop/builder';
import type { Kind, KubeObject } from '@kubeloop/client';
import { type Defaulter, defaultingHandler, type Validator, validatingHandler } from './admission/typed.js';
import { type AdmissionHandler, AdmissionWebhook } from './admission/webhook.js';
import { ConversionWebhook, type ConvertFunc, type HubAndSpoke } from './conversion/conversion.js';
import { CONVERT_PATH } from './names.js';
import {
  type WebhookDeclarationOptions,
  type WebhookRegistration,
  type WebhookSettings,
  webhookRegistration,
} from './registration.js';
import { WebhookServer, type WebhookServerOptions } from './server/server.js';

const servers = new WeakMap<Manager, WebhookServer>();
const converters = new WeakMap<WebhookServer, ConversionWebhook>();
const registrations = new WeakMap<Manager, WebhookRegistration[]>();

/**
 * The manager's webhook server (controller-runtime `mgr.GetWebhookServer()`), made on first call with
 * `options` over the manager's `webhook` options (`newManager(config, { webhook: { bindAddress, certDir } })`;
 * the manager's metrics registry and logger by default), added as an HTTP server runnable (it
 * listens before the caches start and stops after the controllers) and with the readiness check
 * `webhookServerReady`. @throws TypeError when `options` are given after the server was made.
 */
export function getWebhookServer(mgr: Manager, options?: WebhookServerOptions): WebhookServer {
  const known = servers.get(mgr);
  if (known) {
    if (options)
      throw new TypeError(
        'getWebhookServer: the server of this manager exists already; pass options on the first call',
      );
    return known;
  }
  const server = new WebhookServer({
    metricsRegistry: mgr.getMetricsRegistry(),
    logger: mgr.getLogger(),
    ...mgr.getOptions().webhook,
    ...options,
  });
  servers.set(mgr, server);
  mgr.addHTTPServer(server);
  mgr.addReadyzCheck('webhookServerReady', server.startedChecker());
  return server;
}

/** The shared `/convert` webhook of a server, registered on first use. */
export function conversionWebhookFor(server: WebhookServer): ConversionWebhook {
  let c = converters.get(server);
  if (!c) {
    c = new ConversionWebhook();
    converters.set(server, c);
    server.register(CONVERT_PATH, c);
  }
  return c;
}

/** The registrations made by the webhook builder on `mgr`, in order. */
export function webhookRegistrations(mgr: Manager): readonly WebhookRegistration[] {
  return registrations.get(mgr) ?? [];
}

/** Fluent builder of a kind's webhooks; made by {@link newWebhookManagedBy}. */
export class WebhookBuilder<T extends KubeObject = KubeObject> {
  readonly #mgr: Manager;
  #kind: Kind<T> | undefined;
  #validator: Validator<T> | undefined;
  #defaulter: Defaulter<T> | undefined;
  #conversion: HubAndSpoke | ConvertFunc | undefined;
  #settings: WebhookSettings = {};

  constructor(mgr: Manager) {
    this.#mgr = mgr;
  }

  /** The kind the webhooks are for. @throws TypeError when called twice. */
  for<U extends KubeObject>(kind: Kind<U>): WebhookBuilder<U> {
    if (this.#kind) throw new TypeError('for() was called already');
    const self = this as unknown as WebhookBuilder<U>;
    self.#kind = kind;
    return self;
  }

  /** Everything a {@link defineWebhook} declaration holds (its kind, handlers and settings). */
  from<U extends KubeObject>(declaration: WebhookDeclarationOptions<U>): WebhookBuilder<U> {
    const b = this.for(declaration.for);
    if (declaration.validator) b.withValidator(declaration.validator);
    if (declaration.defaulter) b.withDefaulter(declaration.defaulter);
    if (declaration.conversion) b.withConversion(declaration.conversion);
    if (declaration.settings) b.withSettings(declaration.settings);
    return b;
  }

  /** Validates the kind at `/validate-…`. */
  withValidator(validator: Validator<T>): this {
    this.#validator = validator;
    return this;
  }

  /** Defaults the kind at `/mutate-…`. */
  withDefaulter(defaulter: Defaulter<T>): this {
    this.#defaulter = defaulter;
    return this;
  }

  /** Converts the kind's versions at `/convert` (hub and spokes, or a function). */
  withConversion(conversion: HubAndSpoke | ConvertFunc): this {
    this.#conversion = conversion;
    return this;
  }

  /** Settings carried into the generated configurations and the handler deadline. */
  withSettings(settings: WebhookSettings): this {
    this.#settings = { ...this.#settings, ...settings };
    return this;
  }

  /**
   * Registers the handlers on the manager's webhook server. @throws TypeError without `for()`, with nothing to
   * register, or when a path is taken.
   */
  complete(): WebhookRegistration {
    const kind = this.#kind;
    if (!kind) throw new TypeError('newWebhookManagedBy: call for(kind) before complete()');
    const reg = webhookRegistration({
      for: kind,
      ...(this.#validator ? { validator: this.#validator } : {}),
      ...(this.#defaulter ? { defaulter: this.#defaulter } : {}),
      ...(this.#conversion ? { conversion: this.#conversion } : {}),
      settings: this.#settings,
    });
    const timeoutMs = this.#settings.handlerTimeoutMs ?? (this.#settings.timeoutSeconds ?? 10) * 1000 - 500;
    const server = getWebhookServer(this.#mgr);
    const logger = this.#mgr.getLogger();
    const serve = (path: string, handler: AdmissionHandler) =>
      server.register(path, new AdmissionWebhook(path.slice(1), handler, { logger, timeoutMs }));
    if (this.#defaulter && reg.mutatePath) serve(reg.mutatePath, defaultingHandler(this.#defaulter, kind));
    if (this.#validator && reg.validatePath)
      serve(reg.validatePath, validatingHandler(this.#validator, kind));
    if (this.#conversion) conversionWebhookFor(server).register(kind, this.#conversion);
    const list = registrations.get(this.#mgr) ?? [];
    list.push(reg);
    registrations.set(this.#mgr, list);
    return reg;
  }
}

/** Starts a webhook builder on `mgr` (controller-runtime `ctrl.NewWebhookManagedBy`). */
export function newWebhookManagedBy(mgr: Manager): WebhookBuilder {
  return new WebhookBuilder(mgr);
}
