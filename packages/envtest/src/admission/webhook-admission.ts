/**
 * Admission webhooks as kube-apiserver runs them (apiserver `admission/plugin/webhook`): when
 * `MutatingWebhookConfiguration` / `ValidatingWebhookConfiguration` objects exist, a write is sent to every
 * matching webhook — mutating ones one after another (configurations by name, webhooks in order; a
 * `reinvocationPolicy: IfNeeded` webhook runs once more when a later one changed the object), validating ones
 * in parallel. Matching follows `rules` (operations, groups, versions, resources with subresources and `*`,
 * scope), `matchPolicy` (Equivalent: another served version of the same resource matches), `namespaceSelector`
 * and `objectSelector`. `failurePolicy` decides what a failed call (timeout, connection error, HTTP error,
 * unreadable reply) does; a dry-run request refuses webhooks whose `sideEffects` are not None/NoneOnDryRun.
 * Denials answer the Status the real server answers; warnings reach the client as `Warning` headers.
 */
import { randomUUID } from 'node:crypto';
import jsonpatch from 'fast-json-patch';
import type { UserInfo } from '../auth.js';
import { ApiStatusError, badRequest, internalError } from '../errors.js';
import type { Registry } from '../registry.js';
import type { ResourceTable } from '../resource-table.js';
import { apiVersionOf, type KObject, type ResourceType } from '../resource-type.js';
import {
  type ClientConfig,
  callWebhook,
  type ServiceResolver,
  WebhookCallError,
  webhookURL,
} from './call.js';
import { WebhookFaults, webhookFaultOf } from './faults.js';
import { type LabelSelectorSpec, selectorMatches } from './selector.js';

/** Options of envtest's webhook admission (`ApiServerOptions.webhooks`). */
export interface WebhookAdmissionOptions {
  /**
   * Resolves a `service` client config to a loopback base URL (`https://127.0.0.1:9443`), as
   * controller-runtime's `WebhookInstallOptions` points configurations at the local webhook server. A
   * service it does not resolve is a failed call.
   */
  readonly resolveService?: ServiceResolver;
}

/** What is being admitted. */
export interface AdmissionAttributes {
  readonly rt: ResourceType;
  readonly operation: 'CREATE' | 'UPDATE' | 'DELETE';
  readonly namespace: string | undefined;
  readonly name: string;
  readonly subResource: string | undefined;
  readonly object: KObject | undefined;
  readonly oldObject: KObject | undefined;
  readonly dryRun: boolean;
  readonly user: UserInfo | undefined;
  readonly options: Record<string, unknown>;
  /**
   * Converts an object to another served version of its resource, as the API server does for a webhook matched
   * through another version (a CRD's conversion webhook); absent: only `apiVersion` changes.
   */
  readonly convert?: (o: KObject, apiVersion: string) => Promise<KObject>;
}

interface Rule {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
}

interface WebhookSpec {
  name: string;
  clientConfig: ClientConfig;
  rules?: Rule[];
  failurePolicy?: 'Fail' | 'Ignore';
  matchPolicy?: 'Exact' | 'Equivalent';
  namespaceSelector?: LabelSelectorSpec;
  objectSelector?: LabelSelectorSpec;
  sideEffects?: string;
  timeoutSeconds?: number;
  admissionReviewVersions?: string[];
  reinvocationPolicy?: 'Never' | 'IfNeeded';
}

const CONFIG_KINDS = {
  mutating: 'admissionregistration.k8s.io/mutatingwebhookconfigurations',
  validating: 'admissionregistration.k8s.io/validatingwebhookconfigurations',
} as const;

function labelsOf(o: KObject | undefined): Record<string, string> | undefined {
  return (o?.metadata as { labels?: Record<string, string> } | undefined)?.labels;
}

function ruleMatches(
  rule: Rule,
  op: string,
  group: string,
  version: string,
  resource: string,
  sub: string | undefined,
  namespaced: boolean,
): boolean {
  const any = (list: string[] | undefined, v: string) => (list ?? []).some((x) => x === '*' || x === v);
  if (!any(rule.operations, op)) return false;
  if (!any(rule.apiGroups, group)) return false;
  if (!any(rule.apiVersions, version)) return false;
  const scope = rule.scope ?? '*';
  if (scope === 'Cluster' && namespaced) return false;
  if (scope === 'Namespaced' && !namespaced) return false;
  const want = sub ? `${resource}/${sub}` : resource;
  return (rule.resources ?? []).some((r) => {
    if (r === '*/*') return true;
    if (r === '*') return !sub;
    if (r === want) return true;
    const [res, s] = r.split('/');
    if (s === undefined) return false;
    return (res === '*' && s === sub) || (res === resource && s === '*' && sub !== undefined);
  });
}

/** The envtest server's webhook admission: see the file comment. */
export class WebhookAdmission {
  readonly faults = new WebhookFaults();
  readonly #registryOf: () => Registry;
  readonly #resources: ResourceTable;
  readonly #options: WebhookAdmissionOptions;

  /** `registry` is read on each call: the server swaps its registry on a restart without state. */
  constructor(registry: () => Registry, resources: ResourceTable, options: WebhookAdmissionOptions = {}) {
    this.#registryOf = registry;
    this.#resources = resources;
    this.#options = options;
  }

  /**
   * Whether some webhook has a rule naming this resource's group and resource (or `*`): only then does a
   * write go through admission, so servers without webhook configurations, and resources no webhook names,
   * are written exactly as before.
   */
  active(rt: ResourceType): boolean {
    // kube-apiserver never sends its webhook configurations themselves to webhooks
    if (rt.group === 'admissionregistration.k8s.io') return false;
    const store = this.#registryOf().store;
    if (store.size(CONFIG_KINDS.mutating) + store.size(CONFIG_KINDS.validating) === 0) return false;
    return [...this.#webhooks('mutating'), ...this.#webhooks('validating')].some((h) =>
      (h.rules ?? []).some(
        (r) =>
          (r.apiGroups ?? []).some((g) => g === '*' || g === rt.group) &&
          (r.resources ?? []).some((x) => {
            const res = x.split('/')[0];
            return res === '*' || res === rt.resource;
          }),
      ),
    );
  }

  #webhooks(which: keyof typeof CONFIG_KINDS): WebhookSpec[] {
    const snap = this.#registryOf().store.snapshot(CONFIG_KINDS[which]);
    const configs = snap.keys
      .map((k) => snap.get(k)?.obj as KObject | undefined)
      .filter((o): o is KObject => o !== undefined)
      .sort((a, b) =>
        String((a.metadata as { name?: string }).name).localeCompare(
          String((b.metadata as { name?: string }).name),
        ),
      );
    return configs.flatMap((c) => (Array.isArray(c.webhooks) ? (c.webhooks as WebhookSpec[]) : []));
  }

  /** The version the webhook is asked in (the request's, or an equivalent served one), or undefined: no match. */
  #match(hook: WebhookSpec, a: AdmissionAttributes): ResourceType | undefined {
    const { rt } = a;
    const rules = hook.rules ?? [];
    const matchesIn = (t: ResourceType) =>
      rules.some((r) =>
        ruleMatches(r, a.operation, t.group, t.version, t.resource, a.subResource, t.namespaced),
      );
    let target: ResourceType | undefined;
    if (matchesIn(rt)) target = rt;
    else if ((hook.matchPolicy ?? 'Equivalent') === 'Equivalent')
      target = this.#resources
        .all()
        .find(
          (t) =>
            t.group === rt.group && t.resource === rt.resource && t.version !== rt.version && matchesIn(t),
        );
    if (!target) return undefined;
    // apiserver object.Matcher: an absent object (old on CREATE, new on DELETE) never matches a selector
    const objectMatches = (o: KObject | undefined) =>
      o !== undefined && selectorMatches(hook.objectSelector, labelsOf(o));
    if (hook.objectSelector && !objectMatches(a.object) && !objectMatches(a.oldObject)) return undefined;
    if (hook.namespaceSelector && !this.#namespaceMatches(hook.namespaceSelector, a)) return undefined;
    return target;
  }

  #namespaceMatches(sel: LabelSelectorSpec, a: AdmissionAttributes): boolean {
    const { rt } = a;
    if (rt.group === '' && rt.resource === 'namespaces')
      return selectorMatches(sel, labelsOf(a.object ?? a.oldObject));
    if (!rt.namespaced || !a.namespace) return true;
    const nsType = this.#resources.lookup('', 'v1', 'namespaces');
    let labels: Record<string, string> | undefined;
    try {
      if (nsType) labels = labelsOf(this.#registryOf().get(nsType, undefined, a.namespace).obj as KObject);
    } catch {
      labels = undefined;
    }
    return selectorMatches(sel, labels);
  }

  async #review(
    hook: WebhookSpec,
    a: AdmissionAttributes,
    target: ResourceType,
    object: KObject | undefined,
  ): Promise<Record<string, unknown>> {
    const [obj, oldObj] = await Promise.all([
      convertTo(a, target, object),
      convertTo(a, target, a.oldObject),
    ]);
    const version = (hook.admissionReviewVersions ?? ['v1']).includes('v1') ? 'v1' : 'v1beta1';
    return {
      apiVersion: `admission.k8s.io/${version}`,
      kind: 'AdmissionReview',
      request: {
        uid: randomUUID(),
        kind: { group: target.group, version: target.version, kind: target.kind },
        resource: { group: target.group, version: target.version, resource: target.resource },
        ...(a.subResource ? { subResource: a.subResource, requestSubResource: a.subResource } : {}),
        requestKind: { group: a.rt.group, version: a.rt.version, kind: a.rt.kind },
        requestResource: { group: a.rt.group, version: a.rt.version, resource: a.rt.resource },
        name: a.name,
        ...(a.namespace ? { namespace: a.namespace } : {}),
        operation: a.operation,
        userInfo: a.user
          ? { username: a.user.name, groups: [...a.user.groups] }
          : { username: 'system:anonymous', groups: ['system:unauthenticated'] },
        object: obj ?? null,
        oldObject: oldObj ?? null,
        dryRun: a.dryRun,
        options: a.options,
      },
    };
  }

  /** The URL a client config names (a Service through `resolveService`), or the call error. */
  resolveURL(cc: ClientConfig): string | WebhookCallError {
    return webhookURL(cc, this.#options.resolveService);
  }

  /** Calls one webhook; returns its response, or undefined when a failed call is ignored. */
  async #call(
    hook: WebhookSpec,
    review: Record<string, unknown>,
  ): Promise<Record<string, unknown> | undefined> {
    const ignore = hook.failurePolicy === 'Ignore';
    try {
      const url = webhookURL(hook.clientConfig ?? {}, this.#options.resolveService);
      if (url instanceof WebhookCallError) throw url;
      const reply = (await callWebhook(
        url,
        hook.clientConfig?.caBundle,
        review,
        hook.timeoutSeconds ?? 10,
        webhookFaultOf(this.faults, hook.name),
      )) as {
        response?: Record<string, unknown>;
      };
      const response = reply?.response;
      const uid = (review.request as { uid: string }).uid;
      if (!response || typeof response !== 'object')
        throw new WebhookCallError('received invalid webhook response: the response is nil');
      if (response.uid !== uid)
        throw new WebhookCallError(
          `received invalid webhook response: expected response.uid="${uid}", got "${String(response.uid)}"`,
        );
      if (typeof response.allowed !== 'boolean')
        throw new WebhookCallError('received invalid webhook response: response.allowed is not a boolean');
      return response;
    } catch (e) {
      const msg = `failed calling webhook "${hook.name}": ${(e as Error).message}`;
      if (ignore) return undefined;
      throw internalError(msg);
    }
  }

  #checkDryRun(hook: WebhookSpec, a: AdmissionAttributes): void {
    if (a.dryRun && hook.sideEffects !== 'None' && hook.sideEffects !== 'NoneOnDryRun')
      throw badRequest(`admission webhook "${hook.name}" does not support dry run`);
  }

  /**
   * Runs the mutating webhooks in order and returns the object with their patches applied (`a.object` itself
   * when none matched). @throws ApiStatusError on a denial or a failed call under `failurePolicy: Fail`.
   */
  async mutate(a: AdmissionAttributes, warnings: string[]): Promise<KObject | undefined> {
    let object = a.object;
    const hooks = this.#webhooks('mutating');
    const ranAt = new Map<string, number>(); // webhook name -> change counter after its call
    let changes = 0;
    const runOne = async (hook: WebhookSpec): Promise<void> => {
      const target = this.#match(hook, { ...a, object });
      if (!target) return;
      this.#checkDryRun(hook, a);
      const review = await this.#review(hook, a, target, object);
      // the object as the webhook got it (in its rule's version): its patch applies to that
      const sent = (review.request as { object: KObject | null }).object;
      const response = await this.#call(hook, review);
      if (!response) return;
      for (const w of (response.warnings as string[] | undefined) ?? []) warnings.push(w);
      // admission/v1 AdmissionResponse.Result is `status` on the wire
      if (!response.allowed) throw denial(hook.name, response.status as Record<string, unknown> | undefined);
      if (typeof response.patch === 'string' && sent && a.operation !== 'DELETE') {
        let patched: KObject;
        try {
          const ops = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
          patched = jsonpatch.applyPatch(structuredClone(sent), ops, true, false).newDocument as KObject;
        } catch (e) {
          if (hook.failurePolicy === 'Ignore') return;
          throw internalError(
            `failed calling webhook "${hook.name}": received invalid webhook response: ${(e as Error).message}`,
          );
        }
        if (JSON.stringify(patched) !== JSON.stringify(sent)) {
          // back to the request's version, through the conversion as the API server converts it
          object = target !== a.rt ? await convertTo(a, a.rt, patched) : patched;
          changes++;
        }
      }
      ranAt.set(hook.name, changes);
    };
    for (const hook of hooks) await runOne(hook);
    // reinvocation: an IfNeeded webhook whose output a later webhook changed runs once more
    const again = hooks.filter(
      (h) =>
        h.reinvocationPolicy === 'IfNeeded' && ranAt.has(h.name) && (ranAt.get(h.name) as number) < changes,
    );
    for (const hook of again) await runOne(hook);
    return object;
  }

  /** Runs the matching validating webhooks in parallel. @throws ApiStatusError as {@link WebhookAdmission.mutate}. */
  async validate(a: AdmissionAttributes, warnings: string[]): Promise<void> {
    const hooks = this.#webhooks('validating')
      .map((hook) => ({ hook, target: this.#match(hook, a) }))
      .filter((h): h is { hook: WebhookSpec; target: ResourceType } => h.target !== undefined);
    for (const { hook } of hooks) this.#checkDryRun(hook, a);
    const results = await Promise.allSettled(
      hooks.map(async ({ hook, target }) => this.#call(hook, await this.#review(hook, a, target, a.object))),
    );
    let first: unknown;
    results.forEach((r, i) => {
      const name = hooks[i]?.hook.name as string;
      if (r.status === 'rejected') {
        first ??= r.reason;
        return;
      }
      const response = r.value;
      if (!response) return;
      for (const w of (response.warnings as string[] | undefined) ?? []) warnings.push(w);
      if (!response.allowed) first ??= denial(name, response.status as Record<string, unknown> | undefined);
    });
    if (first !== undefined) throw first;
  }
}

/** `o` in `target`'s version: through `a.convert` (a CRD's conversion), else with only `apiVersion` changed. */
async function convertTo(
  a: AdmissionAttributes,
  target: ResourceType,
  o?: KObject,
): Promise<KObject | undefined> {
  const to = apiVersionOf(target);
  if (!o || o.apiVersion === to) return o;
  return a.convert ? a.convert(o, to) : { ...o, apiVersion: to };
}

/** The Status of a webhook's denial, worded as apiserver `webhookerrors.ToStatusErr`. */
function denial(webhook: string, result: Record<string, unknown> | undefined): ApiStatusError {
  const r = { ...(result ?? {}) };
  const deniedBy = `admission webhook "${webhook}" denied the request`;
  const code = typeof r.code === 'number' && r.code >= 400 ? r.code : 400;
  const message =
    typeof r.message === 'string' && r.message
      ? `${deniedBy}: ${r.message}`
      : typeof r.reason === 'string' && r.reason
        ? `${deniedBy}: ${r.reason}`
        : `${deniedBy} without explanation`;
  const details = r.details && typeof r.details === 'object' ? r.details : undefined;
  return new ApiStatusError(
    {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      ...(typeof r.reason === 'string' && r.reason ? { reason: r.reason } : {}),
      ...(details ? { details } : {}),
      code,
    } as never,
    code,
  );
}
