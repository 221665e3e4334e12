/**
 * Certificates without cert-manager: a self-signed CA and a serving certificate kept in a Secret all
 * replicas share, rotated before expiry, with the CA bundle server-side-applied into the webhook
 * configurations and CRD conversion configs (what cert-manager's CA injector or
 * open-policy-agent/cert-controller do for controller-runtime operators).
 */
import type { Client, KubeObject } from '@kubeloop/client';
import { isAlreadyExists, isConflict, isNotFound, kind, Secret } from '@kubeloop/client';
import type { Logger } from '@kubeloop/core';
import { Backoff, discardLogger, sleep } from '@kubeloop/core';
import { coversNames, createCA, issueServing, type PemPair, splitPem, validity } from './pki.js';
import type { CertificatePair, CertificateSource } from './source.js';

const YEAR_MS = 365 * 24 * 3600 * 1000;

/** Where the CA bundle goes (names of cluster-scoped objects). */
export interface CABundleTargets {
  readonly mutatingWebhookConfigurations?: readonly string[];
  readonly validatingWebhookConfigurations?: readonly string[];
  /** CRDs whose `spec.conversion.webhook.clientConfig.caBundle` is set. */
  readonly customResourceDefinitions?: readonly string[];
}

/** Options of {@link SelfSignedCertificates}. */
export interface SelfSignedOptions {
  /** A client that reads and writes the Secret and the targets (not a cached reader). */
  readonly client: Client;
  /** The Secret holding `ca.crt`, `ca.key`, `tls.crt`, `tls.key` and `ca-bundle.crt`. */
  readonly secret: { readonly name: string; readonly namespace: string };
  /** SANs of the serving certificate: DNS names (see `serviceDNSNames`) and IP addresses. */
  readonly names: readonly string[];
  /** Validity of the CA and of each serving certificate, in ms. @defaultValue one year */
  readonly validityMs?: number;
  /** Fraction of the validity after which they are renewed. @defaultValue 2/3 */
  readonly rotateAtFraction?: number;
  /**
   * How long a renewed pair waits, in ms, between its CA entering the injected bundle and being served, so
   * the API servers trust it before any replica presents it. @defaultValue 300000
   */
  readonly promoteAfterMs?: number;
  /** Clock in ms since the epoch; inject a fake one in tests. @defaultValue `Date.now` */
  readonly now?: () => number;
  /** How often to look at the Secret (renewal, another replica's rotation), in ms; 0: only `refresh()`. @defaultValue 3600000 */
  readonly checkIntervalMs?: number;
  /** Objects that get the CA bundle. */
  readonly inject?: CABundleTargets;
  /**
   * Resolves when this replica leads and may write the targets (`() => mgr.elected()`); only the leader injects.
   * Nothing waits for it: `start()` and `refresh()` serve the Secret's pair at once, and the injection runs
   * in the background once it resolves (the manager's webhook server must serve before the manager campaigns).
   * @defaultValue this replica always injects, within `refresh()`
   */
  readonly elected?: () => Promise<void>;
  /** Field manager of the server-side applies. @defaultValue `kubeloop-webhook-cainjector` */
  readonly fieldManager?: string;
  readonly logger?: Logger;
}

const MutatingWebhookConfiguration = kind('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration');
const ValidatingWebhookConfiguration = kind(
  'admissionregistration.k8s.io/v1',
  'ValidatingWebhookConfiguration',
);
const CustomResourceDefinition = kind('apiextensions.k8s.io/v1', 'CustomResourceDefinition');

interface Stored {
  ca: PemPair;
  serving: PemPair;
  bundle: string;
  /** The renewed pair, published in the bundle but not served until `nextSince + promoteAfterMs`. */
  next?: { ca: PemPair; serving: PemPair; since: number };
  resourceVersion?: string;
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const unb64 = (s: unknown): string =>
  typeof s === 'string' ? Buffer.from(s, 'base64').toString('utf8') : '';

/**
 * Self-signed {@link CertificateSource}. On `start` it reads the Secret, creating it (CA + serving
 * certificate) when missing; `refresh()` (on `checkIntervalMs` and at will) renews once `rotateAtFraction`
 * of the CA's or the serving certificate's life has passed, in two steps so no request fails during the swap:
 * (1) a new CA and serving certificate are stored as "next" and the new CA joins the CA bundle (new first,
 * the old one kept while valid), which the leader injects; (2) `promoteAfterMs` later the next pair becomes
 * the served one. Every replica serves what the Secret says, so all of them swap at the same step. With
 * `elected`, only the leader injects, and only once elected; nothing here waits for the election.
 */
export class SelfSignedCertificates implements CertificateSource {
  readonly #o: SelfSignedOptions;
  readonly #now: () => number;
  readonly #logger: Logger;
  readonly #listeners = new Set<(p: CertificatePair) => void>();
  #stored: Stored | undefined;
  #injected: string | undefined;
  /** `elected()` has resolved: this replica injects within `refresh()`. */
  #leading = false;
  /** The background wait for `elected()` has begun (once per instance). */
  #awaitingElection = false;
  /** The signal `start()` got: a replica that stopped before it was elected injects nothing. */
  #signal: AbortSignal | undefined;
  /** Renewals this replica wrote. */
  rotations = 0;

  constructor(options: SelfSignedOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#logger = (options.logger ?? discardLogger).child({ component: 'self-signed-certs' });
    const f = options.rotateAtFraction ?? 2 / 3;
    if (!(f > 0 && f < 1)) throw new TypeError(`rotateAtFraction: must be between 0 and 1, got ${f}`);
    if (options.names.length === 0) throw new TypeError('names: give at least one DNS name or IP address');
  }

  current(): CertificatePair {
    if (!this.#stored) throw new Error('self-signed certificates: not started');
    return this.#stored.serving;
  }

  onChange(listener: (pair: CertificatePair) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The CA bundle (base64 PEM, new CA first) for `caBundle` fields. @throws Error before `start`. */
  caBundle(): string {
    if (!this.#stored) throw new Error('self-signed certificates: not started');
    return b64(this.#stored.bundle);
  }

  async start(signal: AbortSignal): Promise<void> {
    this.#signal = signal;
    await this.refresh();
    const period = this.#o.checkIntervalMs ?? 3_600_000;
    if (period > 0) {
      const t = setInterval(() => {
        this.refresh().catch((e) =>
          this.#logger.error({ err: (e as Error).message }, 'certificate refresh failed'),
        );
      }, period);
      t.unref();
      signal.addEventListener('abort', () => clearInterval(t), { once: true });
    }
  }

  #due(pem: string): boolean {
    const { notBefore, notAfter } = validity(pem);
    const f = this.#o.rotateAtFraction ?? 2 / 3;
    return this.#now() >= notBefore + f * (notAfter - notBefore);
  }

  /**
   * Reads the Secret, renews when due (or creates it), swaps the serving pair when it changed, then injects
   * the CA bundle if this replica leads (without `elected`: always). It never waits for leadership: before
   * `elected()` resolves the injection is left to a background task that runs once it does. Resolves `true`
   * when the pair changed. @throws the API error of a failed read, write or (while leading) injection.
   */
  async refresh(): Promise<boolean> {
    let stored = await this.#read();
    if (!stored) stored = await this.#write(undefined, await this.#generate(), undefined);
    else if (stored.next) {
      const promoteAfter = this.#o.promoteAfterMs ?? 300_000;
      const servingExpired = validity(stored.serving.cert).notAfter <= this.#now();
      if (servingExpired || this.#now() >= stored.next.since + promoteAfter)
        stored = await this.#write(stored, { ca: stored.next.ca, serving: stored.next.serving }, undefined);
    } else if (this.#due(stored.ca.cert) || this.#due(stored.serving.cert))
      stored = await this.#write(stored, { ca: stored.ca, serving: stored.serving }, await this.#generate());
    else if (!coversNames(stored.serving.cert, this.#o.names)) {
      // the Secret's pair was issued for other names (a name added, the Service or namespace renamed): a new
      // serving certificate from the same CA, trusted by the bundle already injected, so it is served at once
      const { notAfter } = validity(stored.serving.cert);
      const serving = await issueServing(
        stored.ca,
        this.#o.names,
        new Date(this.#now() - 5 * 60_000),
        new Date(notAfter),
      );
      stored = await this.#write(stored, { ca: stored.ca, serving }, undefined);
    }
    const changed = !this.#stored || this.#stored.serving.cert !== stored.serving.cert;
    this.#stored = stored;
    if (changed) for (const l of this.#listeners) l(stored.serving);
    await this.#injectIfLeader();
    return changed;
  }

  async #read(): Promise<Stored | undefined> {
    const { name, namespace } = this.#o.secret;
    let secret: KubeObject & { data?: Record<string, string> };
    try {
      secret = await this.#o.client.get(Secret, { name, namespace });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
    const d = secret.data ?? {};
    const ca = { cert: unb64(d['ca.crt']), key: unb64(d['ca.key']) };
    const serving = { cert: unb64(d['tls.crt']), key: unb64(d['tls.key']) };
    if (!ca.cert || !ca.key || !serving.cert || !serving.key) return undefined;
    const next = {
      ca: { cert: unb64(d['next-ca.crt']), key: unb64(d['next-ca.key']) },
      serving: { cert: unb64(d['next-tls.crt']), key: unb64(d['next-tls.key']) },
      since: Number(unb64(d['next-since'])),
    };
    return {
      ca,
      serving,
      bundle: unb64(d['ca-bundle.crt']) || ca.cert,
      ...(next.ca.cert && next.serving.cert && Number.isFinite(next.since) ? { next } : {}),
      ...(secret.metadata?.resourceVersion ? { resourceVersion: secret.metadata.resourceVersion } : {}),
    };
  }

  async #generate(): Promise<{ ca: PemPair; serving: PemPair }> {
    const now = this.#now();
    // a little backdating absorbs clock skew between replicas and the API server
    const notBefore = new Date(now - 5 * 60_000);
    const notAfter = new Date(now + (this.#o.validityMs ?? YEAR_MS));
    const ca = await createCA(`kubeloop-webhook-ca@${Math.floor(now / 1000)}`, notBefore, notAfter);
    return { ca, serving: await issueServing(ca, this.#o.names, notBefore, notAfter) };
  }

  /**
   * Writes the Secret: `current` served, `next` (if any) published in the bundle. The bundle holds every
   * CA of `next`, `current` and the previous current that is still valid, newest first. Another replica
   * that wrote first (conflict, already exists) wins: its Secret is read back.
   */
  async #write(
    previous: Stored | undefined,
    current: { ca: PemPair; serving: PemPair },
    next: { ca: PemPair; serving: PemPair } | undefined,
  ): Promise<Stored> {
    const now = this.#now();
    const cas = [
      ...(next ? [next.ca.cert] : []),
      current.ca.cert,
      ...(previous ? splitPem(previous.bundle) : []),
    ]
      .map((p) => (p.endsWith('\n') ? p : `${p}\n`))
      .filter((p, i, all) => all.indexOf(p) === i && validity(p).notAfter > now);
    const bundle = cas.join('');
    const { name, namespace } = this.#o.secret;
    const data: Record<string, string> = {
      'ca.crt': b64(current.ca.cert),
      'ca.key': b64(current.ca.key),
      'tls.crt': b64(current.serving.cert),
      'tls.key': b64(current.serving.key),
      'ca-bundle.crt': b64(bundle),
    };
    if (next) {
      data['next-ca.crt'] = b64(next.ca.cert);
      data['next-ca.key'] = b64(next.ca.key);
      data['next-tls.crt'] = b64(next.serving.cert);
      data['next-tls.key'] = b64(next.serving.key);
      data['next-since'] = b64(String(now));
    }
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name,
        namespace,
        ...(previous?.resourceVersion ? { resourceVersion: previous.resourceVersion } : {}),
      },
      type: 'kubernetes.io/tls',
      data,
    } as never;
    try {
      if (previous?.resourceVersion) await this.#o.client.update(Secret, secret);
      else await this.#o.client.create(Secret, secret);
    } catch (e) {
      if (isConflict(e) || isAlreadyExists(e)) {
        const theirs = await this.#read();
        if (theirs) return theirs;
      }
      throw e;
    }
    this.rotations++;
    this.#logger.info(
      {
        secret: `${namespace}/${name}`,
        step: next ? 'next CA published' : previous ? 'next pair served' : 'created',
      },
      'webhook certificates written',
    );
    return (await this.#read()) ?? { ca: current.ca, serving: current.serving, bundle };
  }

  async #injectIfLeader(): Promise<void> {
    if (!this.#o.inject || !this.#stored) return;
    if (this.caBundle() === this.#injected) return;
    const elected = this.#o.elected;
    if (!elected || this.#leading) {
      await this.injectCABundle();
      return;
    }
    // Waiting here would deadlock a manager: its webhook server starts this source and serves only once it
    // resolves, and the manager campaigns for the lease only after its HTTP servers serve. The leader-only
    // write therefore waits for the election on its own (cert-controller's rotator gates only its CA
    // injection on leadership, and every replica serves the shared Secret's pair).
    if (this.#awaitingElection) return;
    this.#awaitingElection = true;
    elected().then(
      () => this.#injectOnceElected(),
      (e: unknown) => this.#logger.error({ err: (e as Error)?.message }, 'waiting for the election failed'),
    );
  }

  /**
   * Runs once `elected()` resolved: injects the current bundle, retrying a failed apply with backoff
   * (0.5 s doubling, jittered, up to 30 s) until it succeeds or `start()`'s signal aborts.
   */
  async #injectOnceElected(): Promise<void> {
    this.#leading = true;
    const signal = this.#signal;
    const backoff = new Backoff({ initialMs: 500, maxMs: 30_000 });
    while (!signal?.aborted && this.#stored && this.caBundle() !== this.#injected) {
      try {
        await this.injectCABundle();
        return;
      } catch (e) {
        this.#logger.error({ err: (e as Error).message }, 'CA bundle injection failed; retrying');
        await sleep(backoff.nextDelayMs(), signal).catch(() => undefined);
      }
    }
  }

  /**
   * Server-side-applies the CA bundle (own field manager, forced) into every webhook of the named
   * configurations and into the named CRDs' conversion webhook client config. A target that does not
   * exist is skipped (logged). @throws the API error of a failed apply.
   */
  async injectCABundle(): Promise<void> {
    const t = this.#o.inject ?? {};
    const bundle = this.caBundle();
    const opts = { fieldManager: this.#o.fieldManager ?? 'kubeloop-webhook-cainjector', force: true };
    const configs = [
      ...(t.mutatingWebhookConfigurations ?? []).map((n) => [MutatingWebhookConfiguration, n] as const),
      ...(t.validatingWebhookConfigurations ?? []).map((n) => [ValidatingWebhookConfiguration, n] as const),
    ];
    for (const [k, name] of configs) {
      let cur: KubeObject & { webhooks?: { name: string }[] };
      try {
        cur = await this.#o.client.get(k, { name });
      } catch (e) {
        if (isNotFound(e)) {
          this.#logger.info({ kind: k.kind, name }, 'CA bundle target not found; skipped');
          continue;
        }
        throw e;
      }
      await this.#o.client.apply(
        k,
        {
          apiVersion: k.apiVersion,
          kind: k.kind,
          metadata: { name },
          webhooks: (cur.webhooks ?? []).map((w) => ({ name: w.name, clientConfig: { caBundle: bundle } })),
        } as never,
        opts,
      );
    }
    for (const name of t.customResourceDefinitions ?? []) {
      try {
        // apply would create a missing CRD from the partial object: look first
        const crd = (await this.#o.client.get(CustomResourceDefinition, { name })) as {
          spec?: { conversion?: { strategy?: string } };
        };
        // a CRD that does not convert through a webhook (yet) has no client config to trust the bundle: setting
        // strategy Webhook with only a caBundle is refused by the API server
        if (crd.spec?.conversion?.strategy !== 'Webhook') {
          this.#logger.info({ name }, 'CRD does not convert through a webhook; CA bundle not injected');
          continue;
        }
        await this.#o.client.apply(
          CustomResourceDefinition,
          {
            apiVersion: CustomResourceDefinition.apiVersion,
            kind: CustomResourceDefinition.kind,
            metadata: { name },
            spec: { conversion: { strategy: 'Webhook', webhook: { clientConfig: { caBundle: bundle } } } },
          } as never,
          opts,
        );
      } catch (e) {
        if (!isNotFound(e)) throw e;
        this.#logger.info({ name }, 'CRD for the CA bundle not found; skipped');
      }
    }
    this.#injected = bundle;
  }
}
