/**
 * The pod subresources kube-apiserver serves without storage of their own: exec, attach and portforward
 * (streaming connections proxied to the kubelet), eviction (registry/core/pod/storage/eviction.go) and binding
 * (BindingREST in registry/core/pod/storage/storage.go).
 */
import { BUILTIN_RESOURCES } from '../builtin/index.js';
import { ApiStatusError, badRequest, conflict, failureStatus, forbiddenBy } from '../errors.js';
import { contentTypeOf, decodeBody, negotiate, readBody, sendBody } from '../http.js';
import { parseLabelSelector } from '../label-selector.js';
import type { DeleteOptions } from '../registry.js';
import { nowTimestamp } from '../registry.js';
import type { KObject } from '../resource-type.js';
import type { ResourceRequest } from './context.js';
import { dryRunOf, isObj } from './context.js';
import { parseDeleteOptions } from './delete.js';

/** The subresources of pods answered here. */
export const POD_CONNECT_SUBRESOURCES: ReadonlySet<string> = new Set(['exec', 'attach', 'portforward']);

function names(list: unknown): string[] {
  return (Array.isArray(list) ? list : []).map((c) => String(isObj(c) ? c.name : ''));
}

/**
 * The container a log, exec or attach request addresses, as pod validateContainer: `?container=` must name
 * one of the pod's (init, regular or ephemeral) containers; without it the pod must have exactly one regular
 * container. @throws ApiStatusError 400 with the server's message otherwise.
 */
export function checkContainer(pod: Readonly<KObject>, name: string, container: string): void {
  const spec = isObj(pod.spec) ? pod.spec : {};
  const regular = names(spec.containers);
  // podutil.VisitContainers order: init containers, containers, ephemeral containers
  const all = [...names(spec.initContainers), ...regular, ...names(spec.ephemeralContainers)];
  if (container === '') {
    if (regular.length === 0) throw badRequest(`a container name must be specified for pod ${name}`);
    if (regular.length > 1)
      throw badRequest(
        `a container name must be specified for pod ${name}, choose one of: [${all.join(' ')}]`,
      );
  } else if (!all.includes(container)) {
    throw badRequest(`container ${container} is not valid for pod ${name}`);
  }
}

/**
 * exec, attach, portforward (GET or POST), as pod ExecLocation/AttachLocation/PortForwardLocation and the
 * upgrade-aware proxy answer them: the pod must exist (404); exec and attach resolve the container
 * (`?container=`, or the only one) else 400; a pod with no node is 400 "pod <name> does not have a host
 * assigned"; a request without a connection upgrade is 400 "Upgrade request required". envtest runs no
 * kubelet, so an upgrade to a scheduled pod is refused with the same 400.
 */
export async function handlePodConnect(r: ResourceRequest): Promise<void> {
  const { rt, ns, name, sub, q } = r;
  const pod = r.env.registry.view(rt, r.env.registry.get(rt, ns, name!));
  if (sub !== 'portforward') checkContainer(pod, name!, q.get('container') ?? '');
  const spec = isObj(pod.spec) ? pod.spec : {};
  if (!spec.nodeName) throw badRequest(`pod ${name} does not have a host assigned`);
  throw badRequest('Upgrade request required');
}

const PDB = BUILTIN_RESOURCES.find((t) => t.group === 'policy' && t.resource === 'poddisruptionbudgets');

/** A metav1.LabelSelector object as a selector string (matchLabels and matchExpressions ANDed). */
function selectorString(sel: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(isObj(sel.matchLabels) ? sel.matchLabels : {})) parts.push(`${k}=${v}`);
  for (const e of Array.isArray(sel.matchExpressions) ? sel.matchExpressions : []) {
    if (!isObj(e)) continue;
    const values = Array.isArray(e.values) ? e.values.join(',') : '';
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(String(e.key));
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}

/**
 * 429 "Cannot evict pod as it would violate the pod's disruption budget." with one DisruptionBudget cause, as
 * eviction.go's two forms: `retryAfterSeconds` 10 for a budget still being processed, none for one at 0.
 */
function tooManyRequests(cause: string, retryAfterSeconds?: number): ApiStatusError {
  return new ApiStatusError(
    failureStatus(
      429,
      'TooManyRequests',
      "Cannot evict pod as it would violate the pod's disruption budget.",
      {
        ...(retryAfterSeconds ? { retryAfterSeconds } : {}),
        causes: [{ reason: 'DisruptionBudget', message: cause }],
      },
    ),
  );
}

/** createTooManyRequestsError: the budget's status is behind its generation (no disruption controller ran). */
const stillProcessing = (pdb: string) =>
  tooManyRequests(`The disruption budget ${pdb} is still being processed by the server.`, 10);

const MAX_DISRUPTED_POD_SIZE = 2000;

function isPodReady(pod: Readonly<KObject>): boolean {
  const st = isObj(pod.status) ? pod.status : {};
  const conds = Array.isArray(st.conditions) ? st.conditions : [];
  return conds.some((c) => isObj(c) && c.type === 'Ready' && c.status === 'True');
}

/**
 * checkAndDecrement: refuse unless the budget was processed and allows a disruption, else take one
 * (`status.disruptionsAllowed` − 1, the `DisruptionAllowed` condition False/InsufficientPods at 0, the pod in
 * `status.disruptedPods`) and write the status as the eviction REST's client does (`kube-apiserver` manager);
 * a dry run takes nothing.
 */
function checkAndDecrement(
  r: ResourceRequest,
  pdb: Readonly<KObject>,
  podName: string,
  dryRun: boolean,
): void {
  if (!PDB) return;
  const pm = isObj(pdb.metadata) ? pdb.metadata : {};
  const st = isObj(pdb.status) ? pdb.status : {};
  const pdbName = String(pm.name);
  if (Number(st.observedGeneration ?? 0) < Number(pm.generation ?? 0)) throw stillProcessing(pdbName);
  const allowed = Number(st.disruptionsAllowed ?? 0);
  if (allowed < 0)
    throw forbiddenBy('poddisruptionbudget', 'policy', pdbName, 'pdb disruptions allowed is negative');
  if (Object.keys(isObj(st.disruptedPods) ? st.disruptedPods : {}).length > MAX_DISRUPTED_POD_SIZE)
    throw forbiddenBy(
      'poddisruptionbudget',
      'policy',
      pdbName,
      'DisruptedPods map too big - too many evictions not confirmed by PDB controller',
    );
  if (allowed === 0)
    throw tooManyRequests(
      `The disruption budget ${pdbName} needs ${Number(st.desiredHealthy ?? 0)} healthy pods and has ${Number(st.currentHealthy ?? 0)} currently`,
    );
  if (dryRun) return;
  const now = nowTimestamp();
  const status: Record<string, unknown> = structuredClone(st);
  status.disruptionsAllowed = allowed - 1;
  if (allowed - 1 === 0) {
    // pdbhelper.UpdateDisruptionAllowedCondition with apimeta.SetStatusCondition
    const conds = (Array.isArray(status.conditions) ? status.conditions : []) as Record<string, unknown>[];
    const cond = conds.find((c) => isObj(c) && c.type === 'DisruptionAllowed');
    const next = {
      type: 'DisruptionAllowed',
      status: 'False',
      observedGeneration: status.observedGeneration ?? 0,
      lastTransitionTime: cond && cond.status === 'False' ? cond.lastTransitionTime : now,
      reason: 'InsufficientPods',
      message: typeof cond?.message === 'string' ? cond.message : '',
    };
    status.conditions = cond ? conds.map((c) => (c === cond ? next : c)) : [...conds, next];
  }
  status.disruptedPods = { ...(isObj(st.disruptedPods) ? st.disruptedPods : {}), [podName]: now };
  const body = { ...structuredClone(pdb), status } as KObject;
  r.env.registry.update(PDB, r.ns, pdbName, body, { fieldManager: 'kube-apiserver', subresource: 'status' });
}

/**
 * POST pods/eviction (an policy/v1 Eviction), as EvictionREST.Create in 1.32: the Eviction's name must be the
 * pod's (400); the pod must exist (404). A pod whose budget need not be checked (canIgnorePDB: Pending — every
 * pod in envtest, which runs no kubelet, unless a test writes its status —, Succeeded, Failed, or already
 * terminating) is deleted at once. Otherwise the PodDisruptionBudgets whose selector matches its labels decide:
 * none → delete; more than one → a 500 Status; an unready pod (no Ready=True condition) under a budget with
 * `unhealthyPodEvictionPolicy: AlwaysAllow`, or whose budget has `currentHealthy >= desiredHealthy > 0`, is
 * deleted without taking a disruption; else the budget must allow one ({@link checkAndDecrement}: 429 while
 * `status.observedGeneration` is behind — always so without kube-controller-manager, so a PDB blocks the
 * eviction of a Running pod — or at 0, 403 negative). The delete uses the Eviction's deleteOptions (plus the
 * pod's resourceVersion as a precondition where upstream adds one) after the pod gets the `DisruptionTarget`
 * condition (PodDisruptionConditions, GA); the answer is a Success Status with code 201.
 */
export async function handleEviction(r: ResourceRequest): Promise<void> {
  const { rt, ns, name, req, res } = r;
  const { registry } = r.env;
  const fmt = negotiate(String(req.headers.accept ?? ''), {});
  const raw = await readBody(req);
  const body = raw.length ? decodeBody(raw, contentTypeOf(req) || 'application/json', 'Eviction') : {};
  const eviction = isObj(body) ? body : {};
  const meta = isObj(eviction.metadata) ? eviction.metadata : {};
  if (meta.name !== name) throw badRequest('name in URL does not match name in Eviction object');
  const original = parseDeleteOptions(
    isObj(eviction.deleteOptions) ? eviction.deleteOptions : undefined,
    r.q,
  );
  const pod = registry.view(rt, registry.get(rt, ns, name!));
  const pm = isObj(pod.metadata) ? pod.metadata : {};
  const phase = isObj(pod.status) ? pod.status.phase : undefined;
  const terminating = pm.deletionTimestamp !== undefined && pm.deletionTimestamp !== null;
  const rvUnset = original.preconditions?.resourceVersion === undefined;
  const withRv = (o: DeleteOptions): DeleteOptions => ({
    ...o,
    preconditions: { ...o.preconditions, resourceVersion: String(pm.resourceVersion) },
  });
  const success = () =>
    sendBody(res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }, fmt);

  if (phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || terminating) {
    // shouldEnforceResourceVersion: a Pending pod is pinned to the version just read
    const enforce = phase === 'Pending' && !terminating && rvUnset;
    markAndDelete(r, pod, enforce ? withRv(original) : original);
    success();
    return;
  }
  let pdbs: Readonly<KObject>[] = [];
  if (PDB) {
    const labels = (isObj(pm.labels) ? pm.labels : {}) as Record<string, string>;
    pdbs = (await registry.list(PDB, { namespace: ns })).entries
      .map((e) => registry.view(PDB, e))
      .filter((p) => {
        const sel = isObj(p.spec) ? p.spec.selector : undefined;
        return isObj(sel) && parseLabelSelector(selectorString(sel)).matches(labels);
      });
  }
  if (pdbs.length > 1) {
    // returned as the result object, not an error: no reason, the code is the HTTP status
    const message =
      'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.';
    sendBody(
      res,
      500,
      { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 },
      fmt,
    );
    return;
  }
  let pinned = false;
  const pdb = pdbs[0];
  if (pdb) {
    const spec = isObj(pdb.spec) ? pdb.spec : {};
    const st = isObj(pdb.status) ? pdb.status : {};
    const desired = Number(st.desiredHealthy ?? 0);
    if (
      !isPodReady(pod) &&
      (spec.unhealthyPodEvictionPolicy === 'AlwaysAllow' ||
        (Number(st.currentHealthy ?? 0) >= desired && desired > 0))
    )
      pinned = true;
    else checkAndDecrement(r, pdb, name!, original.dryRun === true);
  }
  try {
    markAndDelete(r, pod, pinned ? withRv(original) : original);
  } catch (e) {
    if (pinned && rvUnset && e instanceof ApiStatusError && e.httpCode === 409)
      throw stillProcessing(String(isObj(pdb?.metadata) ? pdb.metadata.name : ''));
    throw e;
  }
  success();
}

/**
 * addConditionAndDeletePod: unless a dry run, the pod first gets the `DisruptionTarget` condition (True,
 * EvictionByEvictionAPI, "Eviction API: evicting") in a status write, then it is deleted with `opts`.
 */
function markAndDelete(r: ResourceRequest, pod: Readonly<KObject>, opts: DeleteOptions): void {
  const { rt, ns, name } = r;
  const { registry } = r.env;
  let del = opts;
  if (!opts.dryRun) {
    const pm = isObj(pod.metadata) ? pod.metadata : {};
    const pre = opts.preconditions ?? {};
    if (pre.uid !== undefined && pre.uid !== pm.uid)
      throw conflict(
        'Pod',
        '',
        name!,
        `the UID in the precondition (${pre.uid}) does not match the UID in record (${String(pm.uid)}). The object might have been deleted and then recreated`,
      );
    if (pre.resourceVersion !== undefined && pre.resourceVersion !== pm.resourceVersion)
      throw conflict(
        'Pod',
        '',
        name!,
        `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${String(pm.resourceVersion)}). The object might have been modified`,
      );
    const next = structuredClone(pod) as KObject;
    const status = (isObj(next.status) ? next.status : {}) as Record<string, unknown>;
    const conds = (Array.isArray(status.conditions) ? status.conditions : []) as Record<string, unknown>[];
    const cur = conds.find((c) => isObj(c) && c.type === 'DisruptionTarget');
    const now = nowTimestamp();
    const cond = {
      type: 'DisruptionTarget',
      status: 'True',
      lastProbeTime: null,
      lastTransitionTime: cur && cur.status === 'True' ? cur.lastTransitionTime : now,
      reason: 'EvictionByEvictionAPI',
      message: 'Eviction API: evicting',
    };
    status.conditions = cur ? conds.map((c) => (c === cur ? cond : c)) : [...conds, cond];
    next.status = status;
    const written = registry.update(rt, ns, name!, next, {
      fieldManager: 'kube-apiserver',
      subresource: 'status',
    });
    if (pre.resourceVersion !== undefined) {
      const rv = isObj(written.object.metadata) ? written.object.metadata.resourceVersion : undefined;
      del = { ...opts, preconditions: { ...pre, resourceVersion: String(rv) } };
    }
  }
  registry.delete(rt, ns, name!, del);
}

/**
 * POST pods/binding (a v1 Binding), as BindingREST.Create: the Binding's name must be the pod's (400), its
 * `target.kind` empty or `Node` and `target.name` set (ValidatePodBinding, answered as the server answers an
 * aggregate error: 500); then, as setPodHostAndAnnotations, the pod (404 if missing; a `metadata.uid` in the
 * Binding is a precondition, 409) gets `spec.nodeName`, the Binding's annotations and the `PodScheduled=True`
 * condition in one write of the stored object that adds no managedFields entry. A pod being deleted, already
 * on a node or with scheduling gates is a 409 Conflict on `pods/binding`. `?dryRun=All` writes nothing. The
 * answer is a Success Status with code 201.
 */
export async function handleBinding(r: ResourceRequest): Promise<void> {
  const { rt, ns, name, req, res, q } = r;
  const { registry } = r.env;
  const fmt = negotiate(String(req.headers.accept ?? ''), {});
  const raw = await readBody(req);
  const body = raw.length ? decodeBody(raw, contentTypeOf(req) || 'application/json', 'Binding') : {};
  const binding = isObj(body) ? body : {};
  const meta = isObj(binding.metadata) ? binding.metadata : {};
  if (meta.name !== name) throw badRequest('name in URL does not match name in Binding object');
  const target = isObj(binding.target) ? binding.target : {};
  const errs: string[] = [];
  if (target.kind !== undefined && target.kind !== '' && target.kind !== 'Node')
    errs.push(
      `target.kind: Unsupported value: ${JSON.stringify(target.kind)}: supported values: "Node", "<empty>"`,
    );
  if (typeof target.name !== 'string' || target.name === '') errs.push('target.name: Required value');
  if (errs.length)
    throw new ApiStatusError(
      failureStatus(500, undefined, errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`),
    );
  const entry = registry.get(rt, ns, name!);
  const pod = registry.view(rt, entry);
  const pm = isObj(pod.metadata) ? pod.metadata : {};
  const spec = isObj(pod.spec) ? pod.spec : {};
  const refuse = (why: string) => conflict('pods/binding', '', name!, why);
  if (typeof meta.uid === 'string' && meta.uid !== '' && meta.uid !== pm.uid)
    throw conflict(
      'pods',
      '',
      name!,
      `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${String(pm.uid)}`,
    );
  if (pm.deletionTimestamp) throw refuse(`pod ${name} is being deleted, cannot be assigned to a host`);
  if (spec.nodeName) throw refuse(`pod ${name} is already assigned to node ${JSON.stringify(spec.nodeName)}`);
  if (Array.isArray(spec.schedulingGates) && spec.schedulingGates.length > 0)
    throw refuse(`pod ${name} has non-empty .spec.schedulingGates`);
  if (!dryRunOf(q)) {
    const next = structuredClone(entry.obj) as KObject;
    (next.spec as Record<string, unknown>).nodeName = target.name;
    const nm = next.metadata as Record<string, unknown>;
    const annotations = isObj(meta.annotations) ? meta.annotations : {};
    if (Object.keys(annotations).length)
      nm.annotations = { ...(isObj(nm.annotations) ? nm.annotations : {}), ...annotations };
    const status = (isObj(next.status) ? next.status : {}) as Record<string, unknown>;
    const conds = (Array.isArray(status.conditions) ? status.conditions : []) as Record<string, unknown>[];
    const cur = conds.find((c) => isObj(c) && c.type === 'PodScheduled');
    // podutil.UpdatePodCondition: a new condition gets lastTransitionTime now, a changed status too
    const cond = {
      type: 'PodScheduled',
      status: 'True',
      lastProbeTime: null,
      lastTransitionTime: cur && cur.status === 'True' ? cur.lastTransitionTime : nowTimestamp(),
    };
    status.conditions = cur ? conds.map((c) => (c === cur ? cond : c)) : [...conds, cond];
    next.status = status;
    // GuaranteedUpdate on the stored pod: no strategy, no managedFields entry
    registry.store.put(rt.storageKey, entry.key, next);
  }
  sendBody(res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }, fmt);
}
