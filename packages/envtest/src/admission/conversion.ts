/**
 * CRD conversion through a webhook (apiextensions-apiserver `webhookConverter`) in envtest's synchronous
 * registry. Conversions are made before each write, asynchronously: the write's dry runs record every
 * object the registry asked to convert and found no conversion for; those are sent to the CRD's conversion
 * webhook (a `ConversionReview`) and the dry run is repeated until nothing is missing; then the object as it
 * will be stored is converted to every other served version. The registry's `toStorage`/`fromStorage` then
 * read the conversions from a cache keyed by the object's content (metadata apart from labels and
 * annotations, which is all a conversion may change), so the write, its response, later reads, lists and
 * watch events of any version see the webhook's conversion. An object stored before its CRD switched to
 * `strategy: Webhook` reads as strategy None would (apiVersion changed only).
 */
import { randomUUID } from 'node:crypto';
import { internalError } from '../errors.js';
import type { KObject, ResourceType } from '../resource-type.js';
import { type ClientConfig, callWebhook, WebhookCallError } from './call.js';

/**
 * What a conversion needs of the request it serves: the kind, and the server's resolver of webhook URLs (a
 * handler's `ResourceRequest` fits; named here so that this module does not import the handler context,
 * which leads back to the CRD code that calls it).
 */
export interface ConversionRequest {
  readonly env: {
    readonly admission?: { resolveURL(cc: ClientConfig): string | WebhookCallError } | undefined;
  };
  readonly rt: ResourceType;
}

const MAX_ENTRIES = 50_000;
/** crdUid|apiVersion|content → converted object (its metadata holds only labels/annotations). */
const cache = new Map<string, KObject>();
/** Misses recorded while a dry run is in progress (the registry is synchronous: one at a time). */
let misses: { crdUid: string; obj: KObject; to: string }[] | undefined;

function contentKey(crdUid: string, o: KObject, to: string): string {
  const m = (o.metadata ?? {}) as { labels?: unknown; annotations?: unknown };
  return `${crdUid}|${to}|${JSON.stringify({ ...o, metadata: { labels: m.labels, annotations: m.annotations } })}`;
}

/** The webhook's conversion of `o` to `to`, if made; records a miss during a dry run. */
export function cachedConversion(crdUid: string, o: KObject, to: string): KObject | undefined {
  if (o.apiVersion === to) return o;
  const hit = cache.get(contentKey(crdUid, o, to));
  if (!hit) {
    misses?.push({ crdUid, obj: structuredClone(o), to });
    return undefined;
  }
  const hm = (hit.metadata ?? {}) as Record<string, unknown>;
  const metadata: Record<string, unknown> = { ...((o.metadata ?? {}) as Record<string, unknown>) };
  for (const f of ['labels', 'annotations'] as const) {
    if (hm[f] === undefined) delete metadata[f];
    else metadata[f] = hm[f];
  }
  return { ...hit, metadata };
}

function remember(crdUid: string, input: KObject, to: string, out: KObject): void {
  if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
  const m = (out.metadata ?? {}) as { labels?: unknown; annotations?: unknown };
  cache.set(contentKey(crdUid, input, to), {
    ...out,
    metadata: { labels: m.labels, annotations: m.annotations },
  } as KObject);
}

/** Sends `objects` to the CRD's conversion webhook; caches and returns the converted objects. */
async function convertBatch(
  r: ConversionRequest,
  conv: NonNullable<ResourceType['conversion']>,
  objects: KObject[],
  to: string,
): Promise<KObject[]> {
  const cc = (conv.webhook.clientConfig ?? {}) as ClientConfig;
  const versions = (conv.webhook.conversionReviewVersions as string[] | undefined) ?? ['v1'];
  const reviewVersion = versions.includes('v1') ? 'v1' : 'v1beta1';
  const uid = randomUUID();
  const from = objects[0]?.apiVersion ?? '';
  const fail = (msg: string) =>
    internalError(`conversion webhook for ${from}, Kind=${conv.kind} failed: ${msg}`);
  const adm = r.env.admission;
  const url = adm ? adm.resolveURL(cc) : new WebhookCallError('no webhook resolver');
  if (url instanceof WebhookCallError) throw fail(url.message);
  let reply: {
    response?: { uid?: string; convertedObjects?: KObject[]; result?: { status?: string; message?: string } };
  };
  try {
    reply = (await callWebhook(
      url,
      cc.caBundle,
      {
        apiVersion: `apiextensions.k8s.io/${reviewVersion}`,
        kind: 'ConversionReview',
        request: { uid, desiredAPIVersion: to, objects },
        // kube-apiserver serializes the review's zero response too (recorded from 1.32)
        response: { uid: '', convertedObjects: null, result: { metadata: {} } },
      },
      30,
      undefined,
    )) as typeof reply;
  } catch (e) {
    throw fail((e as Error).message);
  }
  const res = reply?.response;
  if (!res || res.uid !== uid) throw fail(`expected response.uid="${uid}", got "${String(res?.uid)}"`);
  if (res.result?.status !== 'Success')
    throw fail(res.result?.message ?? 'the webhook did not report Success');
  const out = res.convertedObjects ?? [];
  if (out.length !== objects.length) throw fail(`returned ${out.length} objects, expected ${objects.length}`);
  out.forEach((o, i) => {
    if (o.apiVersion !== to)
      throw fail(`invalid apiVersion "${String(o.apiVersion)}" of a converted object, expected "${to}"`);
    remember(conv.crdUid, objects[i] as KObject, to, o);
  });
  return out;
}

/**
 * `o` in `to` (another served apiVersion of the same CRD), as kube-apiserver converts an object for an
 * admission webhook whose rule names another version (`matchPolicy: Equivalent`): through the CRD's conversion
 * webhook (a conversion already made is reused), or, under strategy None, with only `apiVersion` changed. The
 * metadata is the input's but for labels and annotations, which a conversion may change.
 */
export async function convertObject(r: ConversionRequest, o: KObject, to: string): Promise<KObject> {
  if (o.apiVersion === to) return o;
  const conv = r.rt.conversion;
  if (!conv) return { ...o, apiVersion: to };
  const cached = cachedConversion(conv.crdUid, o, to);
  if (cached) return cached;
  await convertBatch(r, conv, [o], to);
  return cachedConversion(conv.crdUid, o, to) as KObject;
}

/**
 * Runs `dryRun` (a synchronous registry call with `dryRun: true`) until every conversion it needed is made,
 * sending what was missing to the webhook between runs. Returns its last result.
 */
export async function withConversions<T>(r: ConversionRequest, dryRun: () => T): Promise<T> {
  const conv = r.rt.conversion;
  if (!conv) return dryRun();
  for (let round = 0; ; round++) {
    misses = [];
    let result: T | undefined;
    let error: unknown;
    let failed = false;
    let found: typeof misses;
    try {
      result = dryRun();
    } catch (e) {
      // a run that lacked a conversion may fail on the stand-in object: convert, then judge the next run
      error = e;
      failed = true;
    } finally {
      found = misses;
      misses = undefined;
    }
    if (found.length === 0 || round >= 3) {
      if (failed) throw error;
      return result as T;
    }
    const byTarget = new Map<string, KObject[]>();
    for (const m of found) byTarget.set(m.to, [...(byTarget.get(m.to) ?? []), m.obj]);
    for (const [to, objects] of byTarget) await convertBatch(r, conv, objects, to);
  }
}

/**
 * Converts the object as it will be stored (`candidate` is in the request's version) to the storage version
 * and from there to every other served version, so reads and watches of any version find it.
 */
export async function convertForAllVersions(r: ConversionRequest, candidate: KObject): Promise<void> {
  const conv = r.rt.conversion;
  if (!conv) return;
  const storageApiVersion = `${conv.group}/${conv.storageVersion}`;
  const stored =
    candidate.apiVersion === storageApiVersion
      ? candidate
      : (cachedConversion(conv.crdUid, candidate, storageApiVersion) ??
        (await convertBatch(r, conv, [candidate], storageApiVersion))[0]);
  for (const v of conv.servedVersions) {
    const to = `${conv.group}/${v}`;
    if (to === storageApiVersion || cachedConversion(conv.crdUid, stored as KObject, to)) continue;
    await convertBatch(r, conv, [stored as KObject], to);
  }
}
