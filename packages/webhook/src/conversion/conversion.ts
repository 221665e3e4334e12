/**
 * CRD conversion webhooks (`apiextensions.k8s.io/v1` `ConversionReview`): the hub-and-spoke form of
 * controller-runtime's `conversion.Convertible` / `conversion.Hub`, and a plain function form.
 */
import type { Kind, KubeObject } from '@kubeloop/client';
import { parseApiVersion } from '@kubeloop/client/apiutil';
import type { Logger } from '@kubeloop/core';
import { discardLogger } from '@kubeloop/core';
import { decodeReview, isObj, statusBody, type WebhookReply } from '../review.js';

/** `apiextensions/v1.ConversionRequest`. */
export interface ConversionRequest {
  readonly uid: string;
  /** `group/version` every object must be converted to. */
  readonly desiredAPIVersion: string;
  readonly objects: readonly KubeObject[];
}

/** `apiextensions/v1.ConversionResponse`. */
export interface ConversionResponse {
  readonly uid: string;
  readonly convertedObjects: readonly KubeObject[];
  readonly result: { readonly status: 'Success' | 'Failure'; readonly message?: string };
}

/** `apiextensions/v1.ConversionReview`. */
export interface ConversionReview {
  readonly apiVersion: 'apiextensions.k8s.io/v1' | 'apiextensions.k8s.io/v1beta1';
  readonly kind: 'ConversionReview';
  readonly request?: ConversionRequest;
  readonly response?: ConversionResponse;
}

/** How a spoke version converts to and from the hub (controller-runtime `conversion.Convertible`). */
export interface Spoke<S extends KubeObject, H extends KubeObject> {
  /** The spoke as the hub version; set no `apiVersion`, the webhook sets it. */
  toHub(spoke: S): H;
  /** The hub as this spoke version. */
  fromHub(hub: H): S;
}

/**
 * A kind's versions in hub-and-spoke form: `hub` is the version every other converts through (controller-runtime
 * `conversion.Hub`); `spokes` maps each other version to its {@link Spoke}.
 */
export interface HubAndSpoke<H extends KubeObject = KubeObject> {
  /** The hub's kind descriptor, e.g. `Widget` at `example.com/v1`. */
  readonly hub: Kind<H>;
  // biome-ignore lint/suspicious/noExplicitAny: each spoke has its own object type
  readonly spokes: Readonly<Record<string, Spoke<any, H>>>;
}

/**
 * The function form: converts `obj` (any served version) to `desiredAPIVersion`; throw to fail the review.
 * Only `apiVersion` and the body need setting: the webhook checks the result.
 */
export type ConvertFunc = (obj: KubeObject, desiredAPIVersion: string) => KubeObject;

/** Thrown (and answered as a failed review) when a conversion cannot be made. */
export class ConversionError extends Error {
  override readonly name = 'ConversionError';
}

/** Converts one object between the versions of a {@link HubAndSpoke}. @throws ConversionError for an unknown version. */
export function convertHubAndSpoke(def: HubAndSpoke, obj: KubeObject, desiredAPIVersion: string): KubeObject {
  const { group, version: hubVersion } = parseApiVersion(def.hub.apiVersion);
  const from = parseApiVersion(obj.apiVersion ?? '');
  const to = parseApiVersion(desiredAPIVersion);
  const known = [hubVersion, ...Object.keys(def.spokes)].sort();
  const qualified = `${def.hub.kind}${group ? `.${group}` : ''}`;
  for (const [v, g, what] of [
    [from.version, from.group, 'from'],
    [to.version, to.group, 'to'],
  ] as const) {
    if (g !== group)
      throw new ConversionError(
        `conversion ${what} group ${JSON.stringify(g)} of ${qualified} is not supported`,
      );
    if (v !== hubVersion && !Object.hasOwn(def.spokes, v))
      throw new ConversionError(
        `conversion ${what} version ${JSON.stringify(v)} of ${qualified} is not supported: known versions ${known.join(', ')}`,
      );
  }
  if (from.version === to.version) return obj;
  const hub =
    from.version === hubVersion
      ? obj
      : {
          ...(def.spokes[from.version] as Spoke<KubeObject, KubeObject>).toHub(obj),
          apiVersion: def.hub.apiVersion,
        };
  if (to.version === hubVersion) return { ...hub, apiVersion: def.hub.apiVersion, kind: def.hub.kind };
  return {
    ...(def.spokes[to.version] as Spoke<KubeObject, KubeObject>).fromHub(hub),
    apiVersion: desiredAPIVersion,
    kind: def.hub.kind,
  };
}

/**
 * Checks a `ConversionReview` body; returns the review or the message of a 400 answer (JSON parses,
 * `apiVersion` `apiextensions.k8s.io/v1` or `v1beta1`, `kind` `ConversionReview`, `request.uid`,
 * `request.desiredAPIVersion` and `request.objects` present).
 */
export function decodeConversionReview(body: string | Uint8Array): ConversionReview | string {
  const decoded = decodeReview(body, 'ConversionReview', [
    'apiextensions.k8s.io/v1',
    'apiextensions.k8s.io/v1beta1',
  ]);
  if (typeof decoded === 'string') return decoded;
  const req = decoded.request;
  if (typeof req.desiredAPIVersion !== 'string' || req.desiredAPIVersion === '')
    return 'request.desiredAPIVersion: required, must be a non-empty string';
  if (!Array.isArray(req.objects) || !req.objects.every(isObj))
    return 'request.objects: required, must be a list of objects';
  return decoded.review as unknown as ConversionReview;
}

/** Options of {@link ConversionWebhook}. */
export interface ConversionWebhookOptions {
  readonly logger?: Logger;
}

/**
 * The `/convert` endpoint (controller-runtime `conversion.Webhook`): dispatches each object by its group and
 * kind to the registered conversion, and answers a `ConversionReview`. Any failure (an unknown group/kind or
 * version, a throwing conversion, a result that changes the object's identity) fails the whole review with
 * `result.status: Failure` and a message; nothing half-converted is returned.
 */
export class ConversionWebhook {
  readonly #byGroupKind = new Map<string, HubAndSpoke | ConvertFunc>();
  readonly #logger: Logger;

  constructor(options: ConversionWebhookOptions = {}) {
    this.#logger = (options.logger ?? discardLogger).child({ webhook: 'convert' });
  }

  /**
   * Registers the conversion of one kind (by the group of `kind.apiVersion` and `kind.kind`).
   * @throws TypeError when that group/kind is registered already.
   */
  register(kind: Pick<Kind, 'apiVersion' | 'kind'>, conversion: HubAndSpoke | ConvertFunc): void {
    const key = `${parseApiVersion(kind.apiVersion).group}/${kind.kind}`;
    if (this.#byGroupKind.has(key)) throw new TypeError(`conversion of ${key} is registered already`);
    this.#byGroupKind.set(key, conversion);
  }

  /** Whether a conversion is registered for the group/kind. */
  isConvertible(kind: Pick<Kind, 'apiVersion' | 'kind'>): boolean {
    return this.#byGroupKind.has(`${parseApiVersion(kind.apiVersion).group}/${kind.kind}`);
  }

  /** Converts every object of a request; never throws. */
  convert(request: ConversionRequest): ConversionResponse {
    const out: KubeObject[] = [];
    try {
      for (const obj of request.objects) {
        const { group } = parseApiVersion(obj.apiVersion ?? '');
        const conv = this.#byGroupKind.get(`${group}/${obj.kind}`);
        if (!conv)
          throw new ConversionError(
            `no conversion is registered for kind ${JSON.stringify(obj.kind)} in group ${JSON.stringify(group)}`,
          );
        const input = structuredClone(obj);
        const converted =
          typeof conv === 'function'
            ? conv(input, request.desiredAPIVersion)
            : convertHubAndSpoke(conv, input, request.desiredAPIVersion);
        out.push(checkConverted(obj, converted, request.desiredAPIVersion));
      }
    } catch (e) {
      this.#logger.info({ uid: request.uid, err: (e as Error).message }, 'conversion failed');
      return {
        uid: request.uid,
        convertedObjects: [],
        result: { status: 'Failure', message: e instanceof Error ? e.message : String(e) },
      };
    }
    return { uid: request.uid, convertedObjects: out, result: { status: 'Success' } };
  }

  /** Answers one HTTP body: 400 with a `Status` for an unreadable review, else 200 with the review. Never throws. */
  serve(body: string | Uint8Array): WebhookReply {
    const review = decodeConversionReview(body);
    if (typeof review === 'string') return { status: 400, body: statusBody(400, review) };
    const response = this.convert(review.request as ConversionRequest);
    return { status: 200, body: { apiVersion: review.apiVersion, kind: 'ConversionReview', response } };
  }
}

/**
 * The API server rejects a converted object whose identity changed (apiextensions-apiserver
 * `validateConvertedObject`): same kind, the desired apiVersion, same uid/name/namespace; only labels and
 * annotations of metadata may change. The result keeps the input's metadata apart from those.
 */
function checkConverted(input: KubeObject, converted: KubeObject, desired: string): KubeObject {
  if (!isObj(converted))
    throw new ConversionError(`conversion of ${input.metadata?.name} returned no object`);
  if (converted.kind !== undefined && converted.kind !== input.kind)
    throw new ConversionError(`conversion of ${input.metadata?.name} changed the kind to ${converted.kind}`);
  const inMeta: NonNullable<KubeObject['metadata']> = input.metadata ?? {};
  const outMeta: NonNullable<KubeObject['metadata']> = converted.metadata ?? inMeta;
  for (const f of ['uid', 'name', 'namespace'] as const)
    if (outMeta[f] !== inMeta[f])
      throw new ConversionError(`conversion of ${inMeta.name} changed metadata.${f}, which must stay`);
  const metadata = { ...inMeta };
  if (outMeta.labels !== undefined) metadata.labels = outMeta.labels;
  if (outMeta.annotations !== undefined) metadata.annotations = outMeta.annotations;
  return { ...converted, apiVersion: desired, kind: input.kind, metadata };
}
