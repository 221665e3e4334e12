export {
  type Checker,
  CheckSet,
  cacheSyncCheck,
  HealthCheckError,
  HealthProbeServer,
  type HealthProbeServerOptions,
  ping,
  type SyncingCache,
  type SyncingManager,
} from './healthz.js';
export {
  BindAddressError,
  HttpServerRunnable,
  parseBindAddress,
  type RequestHandler,
} from './http-server.js';
