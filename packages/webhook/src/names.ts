/** kubebuilder's webhook paths and names for a kind. */
import type { Kind } from '@kubeloop/client';
import { parseApiVersion } from '@kubeloop/client/apiutil';

/** `/validate-<group with dots as dashes>-<version>-<lowercase kind>` (kubebuilder `generateValidatePath`). */
export function validatePath(kind: Pick<Kind, 'apiVersion' | 'kind'>): string {
  return `/validate-${pathSuffix(kind)}`;
}

/** `/mutate-<group with dots as dashes>-<version>-<lowercase kind>` (kubebuilder `generateMutatePath`). */
export function mutatePath(kind: Pick<Kind, 'apiVersion' | 'kind'>): string {
  return `/mutate-${pathSuffix(kind)}`;
}

/** The conversion endpoint every CRD of a manager shares (controller-runtime registers `/convert`). */
export const CONVERT_PATH = '/convert';

function pathSuffix(kind: Pick<Kind, 'apiVersion' | 'kind'>): string {
  const { group, version } = parseApiVersion(kind.apiVersion);
  return `${group.replaceAll('.', '-')}-${version}-${kind.kind.toLowerCase()}`;
}

/**
 * The plural resource name of a kind as kubebuilder guesses it (lower case; `-s`, `-es` after s/x/z/ch/sh,
 * `-ies` after a consonant and y). Pass `plural` explicitly for irregular names.
 */
export function guessPlural(kindName: string): string {
  const k = kindName.toLowerCase();
  if (/(s|x|z|ch|sh)$/.test(k)) return `${k}es`;
  if (/[^aeiou]y$/.test(k)) return `${k.slice(0, -1)}ies`;
  return `${k}s`;
}
