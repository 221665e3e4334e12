/**
 * @packageDocumentation
 * `create-kubeloop`: the kubeloop project generator (kubebuilder's `init`, `create api`, `create webhook`) as a CLI
 * (`npm create kubeloop`, and the `kubeloop init` / `kubeloop create` commands of `@kubeloop/crd`) and as functions.
 */
export { type CreateIo, runCreateKubeloop } from './cli-main.js';
export {
  type CreateApiOptions,
  type CreateWebhookOptions,
  createApi,
  createWebhook,
  type GenerateOptions,
  type InitOptions,
  init,
  readProject,
  versionsOf,
} from './generator.js';
export { checkGroup, checkKind, checkProjectName, checkVersion, NameError } from './names.js';
export { ConflictError, type FileAction, type FileResult, Plan } from './plan.js';
export { GENERATOR_VERSION, type Project, projectOf, THIRD_PARTY } from './project.js';
