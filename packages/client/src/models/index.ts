/**
 * `@kubeloop/client/models`: the model types of every built-in kind of Kubernetes 1.32, as they are on the wire
 * (generated from `@kubernetes/client-node`'s models by `scripts/gen-builtin-kinds.mjs`, with timestamps,
 * int-or-string, quantities and bytes as their JSON types). Type-only: importing it costs nothing at run time.
 * @module
 */
export type * from './generated.js';
export type { Bytes, IntOrString, MicroTime, Quantity, Time } from './scalars.js';
