/**
 * Server behaviour of built-in kinds that have no hand-written definition, beyond generic storage: which
 * strategies maintain `metadata.generation`, which allow create-on-update, where pod templates live (for
 * template defaults, strategic-merge keys and strict field validation), and the Scale subresource's paths.
 * Follows the kinds' strategies in kube-apiserver `pkg/registry/<group>/<kind>/strategy.go`.
 */
import { defaultPodSpec } from '../builtin-resources.js';
import type { FieldError } from '../errors.js';
import type { KObject, ScaleSpec } from '../resource-type.js';
import {
  validateCronJob,
  validateDaemonSet,
  validateJob,
  validateReplicaSet,
  validateStatefulSet,
} from './workload-validation.js';

/** `group/resource` of kinds whose strategy sets generation 1 on create and bumps it on spec changes. */
export const GENERATION_KINDS: ReadonlySet<string> = new Set([
  'apps/deployments',
  'apps/statefulsets',
  'apps/daemonsets',
  'apps/replicasets',
  '/replicationcontrollers',
  'batch/jobs',
  'batch/cronjobs',
  'autoscaling/horizontalpodautoscalers',
  'policy/poddisruptionbudgets',
  'networking.k8s.io/ingresses',
  'networking.k8s.io/networkpolicies',
  'networking.k8s.io/ingressclasses',
  'apiextensions.k8s.io/customresourcedefinitions',
  'admissionregistration.k8s.io/validatingwebhookconfigurations',
  'admissionregistration.k8s.io/mutatingwebhookconfigurations',
  'admissionregistration.k8s.io/validatingadmissionpolicies',
  'admissionregistration.k8s.io/validatingadmissionpolicybindings',
  'flowcontrol.apiserver.k8s.io/flowschemas',
  'flowcontrol.apiserver.k8s.io/prioritylevelconfigurations',
  'storage.k8s.io/volumeattachments',
]);

/** `group/resource` of kinds whose strategy allows PUT to create (AllowCreateOnUpdate). */
export const CREATE_ON_UPDATE_KINDS: ReadonlySet<string> = new Set([
  '/endpoints',
  '/events',
  '/limitranges',
  'coordination.k8s.io/leases',
  'events.k8s.io/events',
  'rbac.authorization.k8s.io/roles',
  'rbac.authorization.k8s.io/rolebindings',
  'rbac.authorization.k8s.io/clusterroles',
  'rbac.authorization.k8s.io/clusterrolebindings',
  'discovery.k8s.io/endpointslices',
]);

/** Where a workload kind keeps its pod template's spec (dotted path). */
export const POD_TEMPLATE_SPEC: Readonly<Record<string, string>> = {
  'apps/deployments': 'spec.template.spec',
  'apps/statefulsets': 'spec.template.spec',
  'apps/daemonsets': 'spec.template.spec',
  'apps/replicasets': 'spec.template.spec',
  '/replicationcontrollers': 'spec.template.spec',
  '/podtemplates': 'template.spec',
  'batch/jobs': 'spec.template.spec',
  'batch/cronjobs': 'spec.jobTemplate.spec.template.spec',
};

/** Validation of the generic workload kinds that kube-apiserver validates (`workload-validation.ts`). */
export const WORKLOAD_VALIDATORS: Readonly<
  Record<string, (o: KObject, old: KObject | undefined) => FieldError[]>
> = {
  'apps/replicasets': validateReplicaSet,
  'apps/statefulsets': validateStatefulSet,
  'apps/daemonsets': validateDaemonSet,
  'batch/jobs': validateJob,
  'batch/cronjobs': validateCronJob,
};

/** The Scale subresource of the workload kinds that have one. */
export const SCALE_PATHS: ScaleSpec = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
  labelSelectorPath: '.spec.selector',
};

function objAt(
  o: Record<string, unknown>,
  path: string,
  create: boolean,
): Record<string, unknown> | undefined {
  let cur: Record<string, unknown> = o;
  for (const p of path.split('.')) {
    const next = cur[p];
    if (next !== null && typeof next === 'object' && !Array.isArray(next))
      cur = next as Record<string, unknown>;
    else if (create) {
      const fresh: Record<string, unknown> = {};
      cur[p] = fresh;
      cur = fresh;
    } else return undefined;
  }
  return cur;
}

function setDefault(o: Record<string, unknown>, key: string, value: unknown): void {
  if (o[key] === undefined) o[key] = value;
}

/**
 * Scheme defaults of workload kinds (apps/v1 and batch/v1 `SetDefaults_*`): the pod template's defaults
 * (imagePullPolicy, terminationMessagePath, restartPolicy, dnsPolicy, …) and each kind's own.
 */
export function workloadDefaults(groupResource: string): ((o: KObject) => void) | undefined {
  const tmplPath = POD_TEMPLATE_SPEC[groupResource];
  if (!tmplPath) return undefined;
  return (o) => {
    const spec = objAt(o, tmplPath, false);
    if (spec) defaultPodSpec(spec);
    const tmplMeta = objAt(o, tmplPath.replace(/spec$/, 'metadata'), !!spec);
    if (tmplMeta) setDefault(tmplMeta, 'creationTimestamp', null);
    const top = objAt(o, 'spec', false);
    if (!top) return;
    switch (groupResource) {
      case 'apps/statefulsets':
        setDefault(top, 'replicas', 1);
        setDefault(top, 'podManagementPolicy', 'OrderedReady');
        setDefault(top, 'updateStrategy', { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
        setDefault(top, 'revisionHistoryLimit', 10);
        setDefault(top, 'persistentVolumeClaimRetentionPolicy', {
          whenDeleted: 'Retain',
          whenScaled: 'Retain',
        });
        break;
      case 'apps/daemonsets':
        setDefault(top, 'updateStrategy', {
          type: 'RollingUpdate',
          rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
        });
        setDefault(top, 'revisionHistoryLimit', 10);
        break;
      case 'apps/replicasets':
      case '/replicationcontrollers':
        setDefault(top, 'replicas', 1);
        break;
      case 'batch/jobs':
        setDefault(top, 'parallelism', 1);
        setDefault(top, 'completions', 1);
        setDefault(top, 'backoffLimit', 6);
        setDefault(top, 'completionMode', 'NonIndexed');
        setDefault(top, 'suspend', false);
        setDefault(top, 'podReplacementPolicy', 'TerminatingOrFailed');
        break;
      case 'batch/cronjobs':
        setDefault(top, 'concurrencyPolicy', 'Allow');
        setDefault(top, 'suspend', false);
        setDefault(top, 'successfulJobsHistoryLimit', 3);
        setDefault(top, 'failedJobsHistoryLimit', 1);
        break;
    }
  };
}
