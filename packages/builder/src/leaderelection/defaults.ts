/** Lease duration of controller-runtime's manager (and client-go's examples), in ms. */
export const DEFAULT_LEASE_DURATION_MS = 15_000;
/** Renew deadline of controller-runtime's manager, in ms. */
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
/** Retry period of controller-runtime's manager, in ms. */
export const DEFAULT_RETRY_PERIOD_MS = 2_000;
