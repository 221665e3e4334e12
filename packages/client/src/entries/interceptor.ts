/**
 * @packageDocumentation
 * `@kubeloop/client/interceptor`: wrap any `Client` with per-verb functions that answer in its place
 * (controller-runtime `pkg/client/interceptor`). The fake client's interceptors, the cache's write tracking and
 * the call log of `@kubeloop/testing` are built on it.
 */
export {
  InterceptedClient,
  type Interceptor,
  type InterceptorFuncs,
  interceptClient,
} from '../interceptor.js';
