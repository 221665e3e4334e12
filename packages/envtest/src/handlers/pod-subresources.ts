/**
 * The pod subresources kube-apiserver serves without storage of their own: exec, attach and portforward
 * (streaming connections proxied to the kubelet) and eviction (registry/core/pod/storage/eviction.go).
 */
import { BUILTIN_RESOURCES } from '../builtin/index.js';
import { ApiStatusError, badRequest, failureStatus } from '../errors.js';
import { contentTypeOf, decodeBody, negotiate, readBody, sendBody } from '../http.js';
import { parseLabelSelector } from '../label-selector.js';
import type { KObject } from '../resource-type.js';
import type { ResourceRequest } from './context.js';
import { isObj } from './context.js';
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

function tooManyRequests(cause: string): ApiStatusError {
  return new ApiStatusError(
    failureStatus(
      429,
      'TooManyRequests',
      "Cannot evict pod as it would violate the pod's disruption budget.",
      {
        causes: [{ reason: 'DisruptionBudget', message: cause }],
      },
    ),
  );
}

/**
 * POST pods/eviction (an policy/v1 Eviction), as EvictionREST.Create: the Eviction's name must be the pod's
 * (400); the pod must exist (404). A pod no PodDisruptionBudget selects, or a terminal one (Succeeded/Failed),
 * is deleted with the Eviction's deleteOptions and the answer is a Success Status with code 201. A PDB the
 * disruption controller has not processed (status.observedGeneration below generation: always so without
 * kube-controller-manager) refuses with 429; one with status.disruptionsAllowed 0 too; more than one PDB is 500.
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
  const pod = registry.view(rt, registry.get(rt, ns, name!));
  const phase = isObj(pod.status) ? pod.status.phase : undefined;
  if (PDB && phase !== 'Succeeded' && phase !== 'Failed') {
    const labels = (isObj(pod.metadata) && isObj(pod.metadata.labels) ? pod.metadata.labels : {}) as Record<
      string,
      string
    >;
    const pdbs = (await registry.list(PDB, { namespace: ns })).entries
      .map((e) => registry.view(PDB, e))
      .filter((p) => {
        const sel = isObj(p.spec) ? p.spec.selector : undefined;
        return isObj(sel) && parseLabelSelector(selectorString(sel)).matches(labels);
      });
    if (pdbs.length > 1)
      throw new ApiStatusError(
        failureStatus(
          500,
          'InternalError',
          'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
        ),
      );
    const pdb = pdbs[0];
    if (pdb) {
      const pm = isObj(pdb.metadata) ? pdb.metadata : {};
      const st = isObj(pdb.status) ? pdb.status : {};
      if (Number(st.observedGeneration ?? 0) < Number(pm.generation ?? 0))
        throw tooManyRequests(`The disruption budget ${pm.name} is still being processed by the server.`);
      if (Number(st.disruptionsAllowed ?? 0) <= 0)
        throw tooManyRequests(
          `The disruption budget ${pm.name} needs ${Number(st.desiredHealthy ?? 0)} healthy pods and has ${Number(st.currentHealthy ?? 0)} currently`,
        );
    }
  }
  const opts = parseDeleteOptions(isObj(eviction.deleteOptions) ? eviction.deleteOptions : undefined, r.q);
  registry.delete(rt, ns, name!, opts);
  sendBody(res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }, fmt);
}
