import { type ApiClient, isAlreadyExists, isNotFound, type KubeObject, kind } from '@kubeloop/client';
import { vi } from 'vitest';

const CustomResourceDefinition = kind('apiextensions.k8s.io/v1', 'CustomResourceDefinition');

/** What {@link installCRD} needs: one served version, an open schema, optionally a status subresource. */
export interface SimpleCRD {
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  readonly scope: 'Namespaced' | 'Cluster';
  /** Served versions; the first is the storage version. @defaultValue ['v1'] */
  readonly versions?: readonly string[];
  readonly statusSubresource?: boolean;
}

/**
 * Creates the CRD (AlreadyExists is fine: the run shares one server) and waits until a list of the kind
 * answers, so controllers started afterwards find it served.
 */
export async function installCRD(api: ApiClient, crd: SimpleCRD): Promise<void> {
  const versions = crd.versions ?? ['v1'];
  const name = `${crd.plural}.${crd.group}`;
  // A CRD just deleted stays (Terminating) until kube-apiserver has removed its objects; creating it again
  // meanwhile is AlreadyExists, and its kind then refuses creates. Wait until it is gone first.
  await vi.waitFor(
    async () => {
      const existing = await api.get(CustomResourceDefinition, { name }).catch((err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });
      if (existing?.metadata?.deletionTimestamp) throw new Error(`CRD ${name} is still terminating`);
    },
    { timeout: 60_000, interval: 100 },
  );
  try {
    await api.create(CustomResourceDefinition, {
      metadata: { name },
      spec: {
        group: crd.group,
        scope: crd.scope,
        names: { plural: crd.plural, singular: crd.kind.toLowerCase(), kind: crd.kind },
        versions: versions.map((name, i) => ({
          name,
          served: true,
          storage: i === 0,
          ...(crd.statusSubresource ? { subresources: { status: {} } } : {}),
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
            },
          },
        })),
      },
    } as KubeObject);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
  for (const v of versions) {
    const k = kind(`${crd.group}/${v}`, crd.kind);
    await vi.waitFor(() => api.list(k, { limit: 1 }), { timeout: 20_000, interval: 100 });
  }
}
