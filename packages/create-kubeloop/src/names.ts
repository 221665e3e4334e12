/**
 * The Kubernetes naming rules the generator enforces before it writes anything, each error naming the rule it
 * breaks. The rules are apimachinery's (`validation.IsDNS1123Subdomain`, `IsDNS1123Label`), kubebuilder's checks on
 * `--group`, `--version`, `--kind` (a group needs a domain, a kind is UpperCamelCase), and apimachinery's version
 * priority format (`v<major>[(alpha|beta)<minor>]`, as `version.CompareKubeAwareVersionStrings` reads it).
 */

/** A name that breaks a Kubernetes naming rule; the CLI prints its message as one line and exits 2. */
export class NameError extends Error {
  /** `'NameError'`. */
  override readonly name = 'NameError';
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const KUBE_VERSION = /^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;

/**
 * Checks an API group (`--group`): a DNS-1123 subdomain of at most 253 characters with at least one dot, because a
 * custom resource's group must be a domain name (`<plural>.<group>` names its CRD; kube-apiserver refuses a CRD whose
 * group has no dot). @throws NameError naming the rule.
 */
export function checkGroup(group: string): string {
  if (group.length === 0 || group.length > 253 || !DNS1123_SUBDOMAIN.test(group))
    throw new NameError(
      `invalid --group ${JSON.stringify(group)}: an API group must be a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters)`,
    );
  if (!group.includes('.'))
    throw new NameError(
      `invalid --group ${JSON.stringify(group)}: a custom resource's API group must be a domain with at least one dot (e.g. ${group}.example.com), since the CRD is named <plural>.<group>`,
    );
  return group;
}

/**
 * Checks an API version (`--version`): `v1`, `v2`, `v1alpha1`, `v1beta2` — `v`, a major number without a leading
 * zero, optionally `alpha` or `beta` and a minor number (the form Kubernetes orders versions by).
 * @throws NameError naming the rule.
 */
export function checkVersion(version: string): string {
  if (!KUBE_VERSION.test(version))
    throw new NameError(
      `invalid --version ${JSON.stringify(version)}: a Kubernetes API version is v<major> optionally followed by alpha<n> or beta<n> (v1, v2, v1alpha1, v1beta2), numbers without leading zeros`,
    );
  return version;
}

/**
 * Checks a kind name (`--kind`): UpperCamelCase ASCII letters and digits starting with an upper-case letter, at
 * most 63 characters, because the lower-cased kind and its plural are DNS-1123 labels (resource names, URL paths).
 * @throws NameError naming the rule.
 */
export function checkKind(kind: string): string {
  if (!KIND.test(kind) || kind.length > 63)
    throw new NameError(
      `invalid --kind ${JSON.stringify(kind)}: a kind is UpperCamelCase (an upper-case letter, then letters and digits, at most 63 characters), e.g. WebApp`,
    );
  return kind;
}

/**
 * Checks a project name (the folder's name, or `--name`): a DNS-1123 label of at most 56 characters, because it names
 * the manager's Deployment, ServiceAccount and roles and, with `-system`, its namespace (a 63-character label).
 * @throws NameError naming the rule.
 */
export function checkProjectName(name: string): string {
  if (!DNS1123_LABEL.test(name) || name.length > 56)
    throw new NameError(
      `invalid project name ${JSON.stringify(name)}: it names Kubernetes objects and the namespace <name>-system, so it must be a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit) of at most 56 characters`,
    );
  return name;
}

/** `WebApp` → `webApp` (a TypeScript value name). */
export function lowerCamel(kind: string): string {
  return kind.charAt(0).toLowerCase() + kind.slice(1);
}

/** `WebApp` → `web-app` (a file or Kubernetes object name). */
export function kebab(kind: string): string {
  return kind
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}
