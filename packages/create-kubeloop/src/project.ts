/** What the templates know about a project: its name and the names derived from it. */
import { createRequire } from 'node:module';
import { checkProjectName } from './names.js';

/** The names of a generated project's Kubernetes objects, all derived from the project name. */
export interface Project {
  /** The npm package name and the prefix of every object name, a DNS-1123 label. */
  readonly name: string;
  /** The manager's namespace: `<name>-system` (kubebuilder's convention). */
  readonly namespace: string;
  /** The manager's ServiceAccount and Deployment: `<name>-controller-manager`. */
  readonly manager: string;
  /** The range the project's `@kubeloop/*` and `create-kubeloop` dependencies take: this generator's version. */
  readonly kubeloopRange: string;
}

const own = createRequire(import.meta.url)('../package.json') as { version: string };

/** This generator's version: the `@kubeloop/*` packages are released together with it (one changeset group). */
export const GENERATOR_VERSION: string = own.version;

/**
 * Third-party ranges the generated package.json takes: the versions kubeloop itself builds and tests with (a test
 * keeps them equal to the repository's own).
 */
export const THIRD_PARTY: Readonly<Record<string, string>> = {
  typebox: '^1.4.3',
  typescript: '^5.9.0',
  vitest: '^4.1.12',
  '@types/node': '^20.19.43',
  '@biomejs/biome': '^2.6.8',
};

/** The {@link Project} of the name `name`. @throws NameError when `name` is not a DNS-1123 label (≤ 56). */
export function projectOf(name: string, version = GENERATOR_VERSION): Project {
  checkProjectName(name);
  return {
    name,
    namespace: `${name}-system`,
    manager: `${name}-controller-manager`,
    kubeloopRange: `^${version}`,
  };
}
