// The pod shapes every benchmark uses (bench/README.md, "Pod shapes").
//
// - `realisticPod(i)`: the shape a real kube-apiserver returns for a Deployment's pod — 2 containers with env,
//   ports, resources and volume mounts; 3 volumes; 7 labels and 3 annotations; an ownerReference; nodeName;
//   status with 5 conditions, 2 containerStatuses and podIPs; and `managedFields` with 2 entries (the
//   controller-manager's create and the kubelet's status update). ~7.9 KB of JSON, ~3.5 KB of it
//   managedFields, as measured on a real cluster.
// - `smallPod(i)`: the earlier ~2.5 KiB pod (no status, no managedFields).
//
// Deterministic: the same `i` always gives the same bytes, so every implementation parses the same data.

const hex = (n, width) => (n >>> 0).toString(16).padStart(width, '0').slice(-width);
const uid = (i, salt) =>
  `${hex(i * 2654435761 + salt, 8)}-${hex(i + salt, 4)}-4${hex(i * 7 + salt, 3)}-8${hex(i * 13, 3)}-${hex(i * 40503 + salt, 12)}`;
const TS = '2026-11-29T08:14:03Z';
const TS2 = '2026-11-29T08:14:09Z';

/** @param {string} prefix @returns {Record<string, unknown>} */
function containerFields(prefix) {
  // structured-merge-diff FieldsV1 of one container as kube-controller-manager writes it
  return {
    '.': {},
    'f:args': {},
    'f:env': {
      [`k:{"name":"${prefix}_POD_NAME"}`]: {
        '.': {},
        'f:name': {},
        'f:valueFrom': { '.': {}, 'f:fieldRef': {} },
      },
      [`k:{"name":"${prefix}_MODE"}`]: { '.': {}, 'f:name': {}, 'f:value': {} },
      [`k:{"name":"${prefix}_LOG_LEVEL"}`]: { '.': {}, 'f:name': {}, 'f:value': {} },
    },
    'f:image': {},
    'f:imagePullPolicy': {},
    'f:name': {},
    'f:ports': {
      '.': {},
      'k:{"containerPort":8080,"protocol":"TCP"}': {
        '.': {},
        'f:containerPort': {},
        'f:name': {},
        'f:protocol': {},
      },
    },
    'f:resources': {
      '.': {},
      'f:limits': { '.': {}, 'f:memory': {} },
      'f:requests': { '.': {}, 'f:cpu': {}, 'f:memory': {} },
    },
    'f:terminationMessagePath': {},
    'f:terminationMessagePolicy': {},
    'f:volumeMounts': {
      '.': {},
      'k:{"mountPath":"/etc/app"}': { '.': {}, 'f:mountPath': {}, 'f:name': {}, 'f:readOnly': {} },
      'k:{"mountPath":"/var/cache/app"}': { '.': {}, 'f:mountPath': {}, 'f:name': {} },
    },
  };
}

/** @param {number} i */
function managedFields(i) {
  const conditionFields = (type) => ({
    [`k:{"type":"${type}"}`]: {
      '.': {},
      'f:lastProbeTime': {},
      'f:lastTransitionTime': {},
      'f:status': {},
      'f:type': {},
    },
  });
  return [
    {
      manager: 'kube-controller-manager',
      operation: 'Update',
      apiVersion: 'v1',
      time: TS,
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:metadata': {
          'f:generateName': {},
          'f:labels': {
            '.': {},
            'f:app.kubernetes.io/name': {},
            'f:app.kubernetes.io/instance': {},
            'f:app.kubernetes.io/component': {},
            'f:app.kubernetes.io/part-of': {},
            'f:app.kubernetes.io/version': {},
            'f:pod-template-hash': {},
            'f:tier': {},
          },
          'f:annotations': {
            '.': {},
            'f:kubectl.kubernetes.io/restartedAt': {},
            'f:prometheus.io/scrape': {},
            'f:prometheus.io/port': {},
          },
          'f:ownerReferences': { '.': {}, [`k:{"uid":"${uid(i % 50, 7)}"}`]: {} },
        },
        'f:spec': {
          'f:containers': {
            'k:{"name":"app"}': containerFields('APP'),
            'k:{"name":"sidecar"}': containerFields('SIDECAR'),
          },
          'f:dnsPolicy': {},
          'f:enableServiceLinks': {},
          'f:restartPolicy': {},
          'f:schedulerName': {},
          'f:securityContext': {},
          'f:terminationGracePeriodSeconds': {},
          'f:serviceAccountName': {},
          'f:tolerations': {},
          'f:volumes': {
            '.': {},
            'k:{"name":"config"}': {
              '.': {},
              'f:configMap': { '.': {}, 'f:defaultMode': {}, 'f:name': {} },
              'f:name': {},
            },
            'k:{"name":"cache"}': { '.': {}, 'f:emptyDir': {}, 'f:name': {} },
          },
        },
      },
    },
    {
      manager: 'kubelet',
      operation: 'Update',
      apiVersion: 'v1',
      time: TS2,
      fieldsType: 'FieldsV1',
      subresource: 'status',
      fieldsV1: {
        'f:status': {
          'f:conditions': {
            ...conditionFields('ContainersReady'),
            ...conditionFields('Initialized'),
            ...conditionFields('PodReadyToStartContainers'),
            ...conditionFields('Ready'),
          },
          'f:containerStatuses': {},
          'f:hostIP': {},
          'f:hostIPs': {},
          'f:phase': {},
          'f:podIP': {},
          'f:podIPs': {
            '.': {},
            [`k:{"ip":"10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}"}`]: { '.': {}, 'f:ip': {} },
          },
          'f:startTime': {},
          'f:qosClass': {},
        },
      },
    },
  ];
}

/** @param {string} name @param {string} image @param {string} prefix */
function container(name, image, prefix) {
  return {
    name,
    image,
    args: ['--port=8080', '--log-level=info'],
    ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
    env: [
      {
        name: `${prefix}_POD_NAME`,
        valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } },
      },
      { name: `${prefix}_MODE`, value: 'production' },
      { name: `${prefix}_LOG_LEVEL`, value: 'info' },
    ],
    resources: { limits: { memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
    volumeMounts: [
      { name: 'config', readOnly: true, mountPath: '/etc/app' },
      { name: 'cache', mountPath: '/var/cache/app' },
      {
        name: 'kube-api-access-x7k2p',
        readOnly: true,
        mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
      },
    ],
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    imagePullPolicy: 'IfNotPresent',
  };
}

/** @param {string} name @param {string} image @param {number} i */
function containerStatus(name, image, i) {
  return {
    name,
    state: { running: { startedAt: TS2 } },
    ready: true,
    restartCount: 0,
    image,
    imageID: `${image.split(':')[0]}@sha256:${hex(i * 31 + name.length, 8)}${'9f3c2b1a'.repeat(3)}`,
    containerID: `containerd://${hex(i * 17 + name.length, 8)}${'c0ffee42'.repeat(3)}`,
    started: true,
  };
}

/**
 * A realistic pod (~7.9 KB of JSON, ~3.5 KB managedFields).
 * @param {number} i  index (names, IPs, uids derive from it)
 * @param {{ namespaces?: number, resourceVersion?: string }} [opts]
 */
export function realisticPod(i, opts = {}) {
  const nsCount = opts.namespaces ?? 100;
  const namespace = `team-${String(i % nsCount).padStart(3, '0')}`;
  const app = `app-${i % 50}`;
  const hash = hex(i % 50, 10).replace(/^0+/, '7d9f');
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const image = `registry.example.com/team/${app}:v1.${i % 7}.3`;
  const sidecarImage = 'docker.io/envoyproxy/envoy:v1.28.1';
  const conditions = [
    'PodReadyToStartContainers',
    'Initialized',
    'Ready',
    'ContainersReady',
    'PodScheduled',
  ].map((type) => ({
    type,
    status: 'True',
    lastProbeTime: null,
    lastTransitionTime: type === 'PodScheduled' ? TS : TS2,
  }));
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      name: `${app}-${hash}-${hex(i * 2654435761, 5)}`,
      generateName: `${app}-${hash}-`,
      namespace,
      uid: uid(i, 1),
      resourceVersion: opts.resourceVersion ?? String(1000 + i),
      creationTimestamp: TS,
      labels: {
        'app.kubernetes.io/name': app,
        'app.kubernetes.io/instance': `${app}-prod`,
        'app.kubernetes.io/component': i % 3 ? 'server' : 'worker',
        'app.kubernetes.io/part-of': 'storefront',
        'app.kubernetes.io/version': `v1.${i % 7}.3`,
        'pod-template-hash': hash,
        tier: i % 2 ? 'web' : 'backend',
      },
      annotations: {
        'kubectl.kubernetes.io/restartedAt': TS,
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': '8080',
      },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `${app}-${hash}`,
          uid: uid(i % 50, 7),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: managedFields(i),
    },
    spec: {
      volumes: [
        { name: 'config', configMap: { name: `${app}-config`, defaultMode: 420 } },
        { name: 'cache', emptyDir: {} },
        {
          name: 'kube-api-access-x7k2p',
          projected: {
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            ],
            defaultMode: 420,
          },
        },
      ],
      containers: [container('app', image, 'APP'), container('sidecar', sidecarImage, 'SIDECAR')],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      nodeName: `node-${String(i % 200).padStart(3, '0')}.pool-a.example.internal`,
      securityContext: {},
      schedulerName: 'default-scheduler',
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
      priority: 0,
      enableServiceLinks: true,
    },
    status: {
      phase: 'Running',
      conditions,
      hostIP: `192.168.${(i >> 8) & 255}.${i % 200}`,
      hostIPs: [{ ip: `192.168.${(i >> 8) & 255}.${i % 200}` }],
      podIP: ip,
      podIPs: [{ ip }],
      startTime: TS,
      containerStatuses: [containerStatus('app', image, i), containerStatus('sidecar', sidecarImage, i)],
      qosClass: 'Burstable',
    },
  };
}

/** The earlier ~2.5 KiB pod shape (no status, no managedFields). @param {number} i @param {{ namespaces?: number, resourceVersion?: string }} [opts] */
export function smallPod(i, opts = {}) {
  const nsCount = opts.namespaces ?? 100;
  const namespace = `team-${String(i % nsCount).padStart(3, '0')}`;
  const p = realisticPod(i, opts);
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      name: p.metadata.name,
      namespace,
      uid: p.metadata.uid,
      resourceVersion: p.metadata.resourceVersion,
      creationTimestamp: TS,
      labels: p.metadata.labels,
      annotations: p.metadata.annotations,
      ownerReferences: p.metadata.ownerReferences,
    },
    spec: { ...p.spec, containers: [p.spec.containers[0]], volumes: p.spec.volumes },
    status: {
      phase: 'Running',
      hostIP: p.status.hostIP,
      podIP: p.status.podIP,
      startTime: TS,
      qosClass: 'Burstable',
    },
  };
}

/** Pod factories by size name (the BENCH_POD knob). */
export const POD_SHAPES = { realistic: realisticPod, small: smallPod };
