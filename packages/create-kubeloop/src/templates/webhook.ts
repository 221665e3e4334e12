/**
 * The files of `kubeloop create webhook`: a kind's defaulting and validating webhooks and its conversion between
 * versions, declared once with `defineWebhook` (`@kubeloop/webhook`) — the manager serves the declaration and
 * `npm run generate:webhooks` writes the webhook configurations (and the CRD's conversion patch) from it — plus a
 * test against envtest, which calls the webhooks as kube-apiserver does. kubebuilder's `create webhook`.
 */
import { kebab, lowerCamel } from '../names.js';
import type { Project } from '../project.js';

/** What `create webhook` is asked for. */
export interface WebhookSpec {
  readonly version: string;
  readonly kind: string;
  readonly scope: 'Namespaced' | 'Cluster';
  readonly defaulting: boolean;
  readonly validation: boolean;
  /** The other versions of the kind, converted to and from `version` (the hub); empty without `--conversion`. */
  readonly spokes: readonly string[];
  /** The project's name: the value of the \`app.kubernetes.io/managed-by\` label the defaulter sets. */
  readonly operator: string;
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** An import as the project's formatter prints it: one line when it fits in 110 columns, else one name a line. */
function importLine(names: readonly string[], from: string): string {
  const one = `import { ${names.join(', ')} } from '${from}';`;
  return one.length <= 110 ? one : `import {\n${names.map((n) => `  ${n},\n`).join('')}} from '${from}';`;
}

/** The webhook module of the kind. */
export function webhookTs(w: WebhookSpec): string {
  const v = lowerCamel(w.kind);
  const file = kebab(w.kind);
  const imports = ['defineWebhook'];
  if (w.defaulting) imports.push('type Defaulter');
  if (w.validation) imports.push('AdmissionDeniedError', 'type Validator');
  imports.sort((a, b) => a.replace('type ', '').localeCompare(b.replace('type ', '')));
  const spokeImports = w.spokes
    .map((s) => `import type { ${w.kind}Object as ${w.kind}${cap(s)} } from '../api/${s}/${file}.js';`)
    .join('\n');
  const parts: string[] = [];
  if (w.defaulting)
    parts.push(`/** Fills in what a ${w.kind} leaves out, before the API server validates and stores it. */
export const ${v}Defaulter: Defaulter<${w.kind}Object> = {
  default(app) {
    app.metadata = {
      ...app.metadata,
      labels: { 'app.kubernetes.io/managed-by': '${w.operator}', ...app.metadata?.labels },
    };
  },
};`);
  if (w.validation)
    parts.push(`/** Refuses an image without a pinned tag, with the API server's 422 naming the field. */
export const ${v}Validator: Validator<${w.kind}Object> = {
  validateCreate: (app) => check(app),
  validateUpdate: (_old, app) => check(app),
};

function check(app: ${w.kind}Object): string[] {
  const image = app.spec.image;
  if (!/:[^/]+$/.test(image) || image.endsWith(':latest'))
    throw AdmissionDeniedError.invalid(${w.kind}, app.metadata?.name, [
      { field: 'spec.image', message: \`Invalid value: "\${image}": pin a tag other than latest\` },
    ]);
  return (app.spec.replicas ?? 1) === 0 ? ['spec.replicas is 0: the ${w.kind} runs no pods'] : [];
}`);
  const conversion =
    w.spokes.length === 0
      ? ''
      : `
  // ${w.version} is the hub: every other version converts to and from it (the schemas are alike until you change one)
  conversion: {
    hub: ${w.kind},
    spokes: {
${w.spokes
  .map(
    (s) => `      ${s}: {
        toHub: (o: ${w.kind}${cap(s)}): ${w.kind}Object => ({ ...o, spec: { ...o.spec } }),
        fromHub: (o: ${w.kind}Object): ${w.kind}${cap(s)} => ({ ...o, spec: { ...o.spec } }),
      },`,
  )
  .join('\n')}
    },
  },`;
  return `/**
 * The ${w.kind} webhooks, declared once: the manager serves this declaration (src/webhooks/index.ts) and
 * \`npm run generate:webhooks\` writes config/webhook/manifests.yaml${w.spokes.length ? ' and the CRD conversion patch' : ''} from it.
 */
import { ${imports.join(', ')} } from '@kubeloop/webhook';
import { ${w.kind}, type ${w.kind}Object } from '../api/${w.version}/index.js';
${spokeImports}${spokeImports ? '\n' : ''}
${parts.join('\n\n')}${parts.length ? '\n\n' : ''}/** The ${w.kind} webhooks. */
export const ${v}Webhook = defineWebhook({
  for: ${w.kind},${w.defaulting ? `\n  defaulter: ${v}Defaulter,` : ''}${w.validation ? `\n  validator: ${v}Validator,` : ''}${conversion}
});
`;
}

/** The webhooks index: every declaration, and how the manager serves them. */
export function webhooksIndexTs(p: Project): string {
  return `/**
 * Every webhook of ${p.name}; \`kubeloop create webhook\` adds its lines at the markers. \`npm run generate:webhooks\`
 * writes config/webhook/manifests.yaml from the declarations this module exports.
 */
import type { Manager } from '@kubeloop/builder';
import { newClient } from '@kubeloop/client';
import { controllerRbac } from '@kubeloop/crd';
import {
  getWebhookServer,
  newWebhookManagedBy,
  SelfSignedCertificates,
  serviceDNSNames,
} from '@kubeloop/webhook';
// kubeloop:scaffold:imports

/** Every webhook declaration (\`kubeloop webhook generate\` reads them from this list). */
export const webhooks = [
  // kubeloop:scaffold:webhooks
];

/**
 * The CRDs whose conversion this manager serves (\`kubeloop create webhook --conversion\` adds them): their
 * \`caBundle\` is kept current with the webhook configurations'.
 */
export const CONVERTED_CRDS: string[] = [
  // kubeloop:scaffold:crds
];

/** The Service in front of the webhook server (config/webhook/service.yaml). */
export const WEBHOOK_SERVICE = '${p.name}-webhook-service';
/** The name of the generated Mutating- and ValidatingWebhookConfiguration. */
export const WEBHOOK_CONFIGURATION = '${p.name}-webhooks';
/** The Secret the self-signed serving certificate and its CA are kept in, shared by all replicas. */
export const WEBHOOK_SECRET = '${p.name}-webhook-certs';

/**
 * What serving with self-signed certificates needs: their Secret, and patching the CA bundle into the
 * configurations and the converted CRDs.
 */
export const webhookRbac = controllerRbac({
  name: 'webhook-certificates',
  calls: [
    { group: '', resource: 'secrets', verbs: ['get', 'update'], resourceNames: [WEBHOOK_SECRET] },
    { group: '', resource: 'secrets', verbs: ['create'] },
    {
      group: 'admissionregistration.k8s.io',
      resource: 'mutatingwebhookconfigurations',
      verbs: ['get', 'patch'],
      resourceNames: [WEBHOOK_CONFIGURATION],
    },
    {
      group: 'admissionregistration.k8s.io',
      resource: 'validatingwebhookconfigurations',
      verbs: ['get', 'patch'],
      resourceNames: [WEBHOOK_CONFIGURATION],
    },
    // no resourceNames would mean every CRD: the rule is there only when some CRD is converted
    ...(CONVERTED_CRDS.length > 0
      ? [
          {
            group: 'apiextensions.k8s.io',
            resource: 'customresourcedefinitions',
            verbs: ['get', 'patch'] as const,
            resourceNames: CONVERTED_CRDS,
          },
        ]
      : []),
  ],
});

/** Where the webhooks' certificates live. */
export interface WebhookOptions {
  /** The manager's namespace: the certificates' Secret goes there. */
  readonly namespace: string;
  /** More names the serving certificate is for (e.g. 127.0.0.1 in tests). */
  readonly extraNames?: readonly string[];
}

/**
 * More names for the serving certificate from \`WEBHOOK_CERT_HOSTS\` (comma-separated), such as 127.0.0.1 for a
 * manager run on your machine that the API server calls by URL (README, "Run from your machine against a cluster").
 */
function certHosts(): string[] {
  return (process.env.WEBHOOK_CERT_HOSTS ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
}

/**
 * Serves every webhook on the manager's webhook server (\`webhook.bindAddress\` of its options), with a self-signed
 * CA kept in a Secret all replicas share and injected into the webhook configurations and the converted CRDs (no
 * cert-manager needed). Returns the certificates (\`caBundle()\` for tests).
 */
export function setupWebhooks(mgr: Manager, options: WebhookOptions): SelfSignedCertificates {
  const certificates = new SelfSignedCertificates({
    client: newClient(mgr.getConfig()),
    secret: { name: WEBHOOK_SECRET, namespace: options.namespace },
    names: [
      ...serviceDNSNames(WEBHOOK_SERVICE, options.namespace),
      ...(options.extraNames ?? []),
      ...certHosts(),
    ],
    // only the leader patches the CA bundle into the configurations, once elected; every replica serves meanwhile
    elected: () => mgr.elected(),
    inject: {
      mutatingWebhookConfigurations: [WEBHOOK_CONFIGURATION],
      validatingWebhookConfigurations: [WEBHOOK_CONFIGURATION],
      customResourceDefinitions: CONVERTED_CRDS,
    },
  });
  getWebhookServer(mgr, { certificateSource: certificates });
  // kubeloop:scaffold:serve
  return certificates;
}
`;
}

/** The package.json script that writes the webhook configurations and CRD conversion patches. */
export function generateWebhooksScript(p: Project): string {
  return `kubeloop webhook generate dist/webhooks/index.js --out config/webhook --crd-patches config/crd/patches --name ${p.name}-webhooks --service ${p.namespace}/${p.name}-webhook-service`;
}

/** config/webhook: the Service in front of the manager's webhook server, and the generated configurations. */
export function webhookServiceYaml(p: Project): string {
  return `apiVersion: v1
kind: Service
metadata:
  name: ${p.name}-webhook-service
  namespace: ${p.namespace}
spec:
  selector:
    app.kubernetes.io/name: ${p.name}
    app.kubernetes.io/component: manager
  ports:
    - name: webhook
      port: 443
      targetPort: 9443
`;
}

/** config/webhook's kustomization. */
export const webhookKustomization = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - service.yaml
  - manifests.yaml # generated: npm run generate:webhooks
`;

/** The test of the kind's webhooks against envtest, which calls them as kube-apiserver does. */
export function webhookTestTs(w: WebhookSpec): string {
  const file = kebab(w.kind);
  const cluster = w.scope === 'Cluster';
  const meta = (name: string) => (cluster ? `{ name: ${name} }` : `{ namespace: ns, name: ${name} }`);
  const spec = (image: string) =>
    cluster ? `{ image: '${image}', namespace: ns }` : `{ image: '${image}' }`;
  const cases: string[] = [];
  if (w.defaulting)
    cases.push(`  it('defaults: a created ${w.kind} carries the managed-by label', async () => {
    const app = await client.create(${w.kind}, {
      metadata: ${meta("'defaulted'")},
      spec: ${spec('nginx:1.27')},
    });
    expect(app.metadata?.labels?.['app.kubernetes.io/managed-by']).toBe('${w.operator}');
  });`);
  if (w.validation)
    cases.push(`  it('validates: an image without a pinned tag is refused with a 422 naming spec.image', async () => {
    const err = await client
      .create(${w.kind}, { metadata: ${meta("'unpinned'")}, spec: ${spec('nginx:latest')} })
      .catch((e: unknown) => e);
    expect(isInvalid(err)).toBe(true);
    expect(String(err)).toContain('spec.image');
  });`);
  for (const s of w.spokes)
    cases.push(`  it('converts: the object created as ${w.version} reads the same as ${s}', async () => {
    await client.create(${w.kind}, {
      metadata: ${meta("'converted'")},
      spec: ${spec('nginx:1.27')},
    });
    const asSpoke = await client.get(${w.kind}${cap(s)}, ${meta("'converted'")});
    expect(asSpoke.apiVersion).toBe(${w.kind}${cap(s)}.apiVersion);
    expect(asSpoke.spec.image).toBe('nginx:1.27');
  });`);
  const spokeImports = w.spokes
    .map((s) => `import { ${w.kind} as ${w.kind}${cap(s)} } from '../src/api/${s}/${file}.js';`)
    .join('\n');
  // the CRD's conversion goes to the webhook Service as config/crd/patches sends it on a cluster, and its caBundle
  // comes from setupWebhooks as it does there: a conversion the manager would leave untrusted fails this test
  const crdSetup = w.spokes.length
    ? `
    const crd = \`\${${w.kind}.plural}.\${${w.kind}.apiVersion.split('/')[0]}\`;
    await client.patch(
      CRD,
      { name: crd },
      {
        type: 'merge',
        data: crdConversionPatch(crd, { service: { name: WEBHOOK_SERVICE, namespace: ns } }),
      },
    );`
    : '';
  const crdInjected = w.spokes.length
    ? `
    // the CA bundle setupWebhooks injects into the CRD's conversion, as it does on a cluster
    await vi.waitFor(
      async () => {
        const got = (await client.get(CRD, { name: crd })) as { spec?: { conversion?: ConversionSpec } };
        expect(got.spec?.conversion?.webhook?.clientConfig?.caBundle).toBe(caBundle);
      },
      { timeout: 30_000, interval: 100 },
    );`
    : '';
  return `// The ${w.kind} webhooks against an API server that calls them as kube-apiserver does (envtest, with the generated
// CRD from config/crd): the manager serves them with self-signed certificates, and the configurations are generated
// from the same declarations. envtest only: it routes the webhook Service to this process.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Namespace, newManager } from '@kubeloop/builder';
import { type ApiClient, ${w.validation ? 'isInvalid, ' : ''}kind, newClient } from '@kubeloop/client';
import { Environment } from '@kubeloop/envtest';
${importLine([...(w.spokes.length ? ['crdConversionPatch'] : []), 'getWebhookServer', 'webhookConfigurations', 'webhookRegistrations'], '@kubeloop/webhook')}
import { afterAll, beforeAll, describe, expect, it${w.spokes.length ? ', vi' : ''} } from 'vitest';
import { ${w.kind} } from '../src/api/${w.version}/index.js';
${spokeImports}${spokeImports ? '\n' : ''}import { setupWebhooks, WEBHOOK_CONFIGURATION, WEBHOOK_SERVICE } from '../src/webhooks/index.js';
${w.spokes.length ? "\nconst CRD = kind('apiextensions.k8s.io/v1', 'CustomResourceDefinition');\ninterface ConversionSpec {\n  webhook?: { clientConfig?: { caBundle?: string } };\n}\n" : ''}
describe.skipIf(process.env.USE_EXISTING_CLUSTER === 'true')('${w.kind} webhooks', () => {
  let env: Environment;
  let client: ApiClient;
  let port = 0;
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  const ns = \`test-\${randomBytes(4).toString('hex')}\`;
  beforeAll(async () => {
    env = new Environment({
      crdDirectoryPaths: [fileURLToPath(new URL('../config/crd', import.meta.url))],
      errorIfCrdPathMissing: true,
      server: {
        webhooks: {
          resolveService: (s) => (s.name === WEBHOOK_SERVICE ? \`https://127.0.0.1:\${port}\` : undefined),
        },
      },
    });
    await env.start();
    client = newClient(env.config);
    await client.create(Namespace, { metadata: { name: ns } });${crdSetup}
    const mgr = newManager(env.config, { webhook: { bindAddress: '127.0.0.1:0' } });
    const certificates = setupWebhooks(mgr, { namespace: ns, extraNames: ['127.0.0.1'] });
    const server = getWebhookServer(mgr);
    running = mgr.start(stop.signal);
    await server.ready();
    port = server.port() ?? 0;
    const caBundle = certificates.caBundle();
    for (const c of webhookConfigurations(webhookRegistrations(mgr), {
      name: WEBHOOK_CONFIGURATION,
      service: { name: WEBHOOK_SERVICE, namespace: ns },
      caBundle,
    }))
      await client.create(kind(c.apiVersion, c.kind), c);${crdInjected}
  });
  afterAll(async () => {
    stop.abort();
    await running;
    await client?.close();
    await env?.stop();
  });

${cases.join('\n\n')}
});
`;
}

/**
 * The file name of the CRD conversion patch `kubeloop webhook generate` writes (`webhook_in_<group>_<plural>.yaml`),
 * with the plural `defineKind` guesses (apimachinery's `UnsafeGuessKindToResource`: lower case, `-es` after s, x, z,
 * ch, sh, `-ies` after a consonant and y, else `-s`).
 */
export function conversionPatchFile(group: string, kind: string): string {
  return `patches/webhook_in_${group}_${pluralOf(kind)}.yaml`;
}

/** The CRD name (`<plural>.<group>`) of a kind of the project, with the plural `defineKind` guesses. */
export function crdNameOf(group: string, kind: string): string {
  return `${pluralOf(kind)}.${group}`;
}

function pluralOf(kind: string): string {
  const k = kind.toLowerCase();
  return /(s|x|z|ch|sh)$/.test(k) ? `${k}es` : /[^aeiou]y$/.test(k) ? `${k.slice(0, -1)}ies` : `${k}s`;
}
