/**
 * The hand-written built-in kinds (one file per kind in `builtin/`), whose server behaviour goes beyond generic
 * storage. `builtin/index.ts` serves them in place of the generic definitions of the recorded discovery.
 */
import { CONFIGMAPS } from './builtin/configmaps.js';
import { CRDS } from './builtin/crds.js';
import { DEPLOYMENTS } from './builtin/deployments.js';
import { CORE_EVENTS, EVENTS_V1 } from './builtin/events.js';
import { LEASES } from './builtin/leases.js';
import { NAMESPACES } from './builtin/namespaces.js';
import { PODS } from './builtin/pods.js';
import { SECRETS } from './builtin/secrets.js';
import { SERVICES } from './builtin/services.js';
import type { ResourceType } from './resource-type.js';

export {
  DNS1123_LABEL_MSG,
  DNS1123_SUBDOMAIN_MSG,
  defaultPodSpec,
  type NameRule,
  nameErrors,
  validateName,
} from './builtin/common.js';

export const BUILTIN_RESOURCES: readonly ResourceType[] = [
  PODS,
  NAMESPACES,
  CONFIGMAPS,
  SECRETS,
  SERVICES,
  CORE_EVENTS,
  DEPLOYMENTS,
  LEASES,
  EVENTS_V1,
  CRDS,
];
