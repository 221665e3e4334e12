/**
 * Go type facts of the built-in kinds that the generated schema table (`builtin-schemas.ts`, from the client's
 * models) does not keep: which `string` fields are `resource.Quantity` (a custom JSON decoder that also takes
 * numbers) and which have a named string type (`v1.Protocol`), so decode errors name the type as
 * encoding/json does (`reflect.Type.String()`). Fields not listed here are plain `string`. The lists cover the
 * fields of the kinds controllers write most; a named type missing here only changes the type name in the
 * message, never whether the value is refused.
 */

/** Model → fields holding a `resource.Quantity` (single) or a `v1.ResourceList` (map of quantities). */
export const QUANTITY_FIELDS: Readonly<Record<string, Readonly<Record<string, 'single' | 'list'>>>> = {
  V1ResourceRequirements: { limits: 'list', requests: 'list' },
  V1VolumeResourceRequirements: { limits: 'list', requests: 'list' },
  V1PodSpec: { overhead: 'list' },
  V1ContainerStatus: { allocatedResources: 'list' },
  V1NodeStatus: { allocatable: 'list', capacity: 'list' },
  V1PersistentVolumeSpec: { capacity: 'list' },
  V1PersistentVolumeClaimStatus: { allocatedResources: 'list', capacity: 'list' },
  V1ResourceQuotaSpec: { hard: 'list' },
  V1ResourceQuotaStatus: { hard: 'list', used: 'list' },
  V1LimitRangeItem: {
    default: 'list',
    defaultRequest: 'list',
    max: 'list',
    maxLimitRequestRatio: 'list',
    min: 'list',
  },
  V1Overhead: { podFixed: 'list' },
  V1ResourceFieldSelector: { divisor: 'single' },
  V1EmptyDirVolumeSource: { sizeLimit: 'single' },
  V2MetricTarget: { averageValue: 'single', value: 'single' },
  V2MetricValueStatus: { averageValue: 'single', value: 'single' },
  V1CSIStorageCapacity: { capacity: 'single', maximumVolumeSize: 'single' },
};

/** Model → field → Go type of string fields (or lists of them) whose Go type is a named string type. */
export const NAMED_STRING_TYPES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  V1ObjectMeta: { uid: 'types.UID' },
  V1OwnerReference: { uid: 'types.UID' },
  V1ObjectReference: { uid: 'types.UID' },
  V1ManagedFieldsEntry: { operation: 'v1.ManagedFieldsOperationType' },
  V1LabelSelectorRequirement: { operator: 'v1.LabelSelectorOperator' },
  V1Secret: { type: 'v1.SecretType' },
  V1Container: {
    imagePullPolicy: 'v1.PullPolicy',
    terminationMessagePolicy: 'v1.TerminationMessagePolicy',
    restartPolicy: 'v1.ContainerRestartPolicy',
  },
  V1ContainerPort: { protocol: 'v1.Protocol' },
  V1ServicePort: { protocol: 'v1.Protocol' },
  V1ServiceSpec: {
    type: 'v1.ServiceType',
    sessionAffinity: 'v1.ServiceAffinity',
    externalTrafficPolicy: 'v1.ServiceExternalTrafficPolicy',
    internalTrafficPolicy: 'v1.ServiceInternalTrafficPolicy',
    ipFamilies: '[]v1.IPFamily',
    ipFamilyPolicy: 'v1.IPFamilyPolicy',
  },
  V1PodSpec: {
    restartPolicy: 'v1.RestartPolicy',
    dnsPolicy: 'v1.DNSPolicy',
    preemptionPolicy: 'v1.PreemptionPolicy',
  },
  V1PodStatus: { phase: 'v1.PodPhase', qosClass: 'v1.PodQOSClass' },
  V1PodCondition: { type: 'v1.PodConditionType', status: 'v1.ConditionStatus' },
  V1NamespaceStatus: { phase: 'v1.NamespacePhase' },
  V1Toleration: { operator: 'v1.TolerationOperator', effect: 'v1.TaintEffect' },
  V1Condition: { status: 'v1.ConditionStatus' },
  V1DeploymentStrategy: { type: 'v1.DeploymentStrategyType' },
  V1DeploymentCondition: { type: 'v1.DeploymentConditionType', status: 'v1.ConditionStatus' },
  V1StatefulSetSpec: { podManagementPolicy: 'v1.PodManagementPolicyType' },
  V1StatefulSetUpdateStrategy: { type: 'v1.StatefulSetUpdateStrategyType' },
  V1DaemonSetUpdateStrategy: { type: 'v1.DaemonSetUpdateStrategyType' },
  V1JobSpec: { completionMode: 'v1.CompletionMode', podReplacementPolicy: 'v1.PodReplacementPolicy' },
  V1CronJobSpec: { concurrencyPolicy: 'v1.ConcurrencyPolicy' },
  V1PersistentVolumeClaimSpec: {
    accessModes: '[]v1.PersistentVolumeAccessMode',
    volumeMode: 'v1.PersistentVolumeMode',
  },
  V1Capabilities: { add: '[]v1.Capability', drop: '[]v1.Capability' },
  V1LeaseSpec: { strategy: 'v1.CoordinatedLeaseStrategy' },
};
