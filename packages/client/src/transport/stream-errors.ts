import { DecoratorHandler, type Dispatcher } from 'undici';
import { isIdleTimeout, TransportError } from './errors.js';

type Controller = Dispatcher.DispatchController;
interface ErrorCallbacks {
  onResponseError(controller: Controller, err: Error): void;
}
const ForwardingHandler = DecoratorHandler as unknown as new (
  handler: Dispatcher.DispatchHandler,
) => ErrorCallbacks;

/** Marks a dispatch as a stream (watch) and says its idle bound, for {@link streamErrorInterceptor}. @internal */
export const STREAM_IDLE_MS = Symbol('kubeloop.streamIdleMs');

class StreamErrorHandler extends ForwardingHandler {
  readonly #what: string;
  readonly #idleMs: number;
  constructor(handler: Dispatcher.DispatchHandler, what: string, idleMs: number) {
    super(handler);
    this.#what = what;
    this.#idleMs = idleMs;
  }
  override onResponseError(controller: Controller, err: Error): void {
    super.onResponseError(
      controller,
      isIdleTimeout(err)
        ? new TransportError('IdleTimeout', `${this.#what}: no data for ${this.#idleMs} ms`, { cause: err })
        : err,
    );
  }
}

/**
 * Turns undici's body/headers timeout of a stream (the idle watchdog) into a
 * `TransportError('IdleTimeout')`, so a consumer reading the body of a stalled watch gets a typed error.
 * @internal
 */
export function streamErrorInterceptor(): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts, handler) => {
    const idleMs = (opts as { [STREAM_IDLE_MS]?: number })[STREAM_IDLE_MS];
    if (idleMs === undefined) return dispatch(opts, handler);
    const path = (opts.path ?? '').split('?')[0];
    const what = `${opts.method} ${String(opts.origin ?? '')}${path} (watch)`;
    return dispatch(opts, new StreamErrorHandler(handler, what, idleMs));
  };
}
