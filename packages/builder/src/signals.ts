/** `setupSignalHandler` was called twice. Code `'ERR_SIGNAL_HANDLER'`. */
export class SignalHandlerError extends Error {
  readonly code = 'ERR_SIGNAL_HANDLER' as const;
  override readonly name = 'SignalHandlerError';
}

let installed = false;

/**
 * An AbortSignal aborted on the first SIGINT or SIGTERM; a second signal exits the process with code 1
 * (controller-runtime `signals.SetupSignalHandler`).
 * @throws SignalHandlerError when called more than once per process.
 */
export function setupSignalHandler(): AbortSignal {
  if (installed) throw new SignalHandlerError('setupSignalHandler may only be called once');
  installed = true;
  const ac = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    if (ac.signal.aborted) process.exit(1);
    ac.abort(new Error(`received ${sig}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return ac.signal;
}
