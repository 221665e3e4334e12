import { createGunzip, type Gunzip } from 'node:zlib';
import { DecoratorHandler, type Dispatcher } from 'undici';

type Controller = Dispatcher.DispatchController;
type Headers = Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>[2];
interface ResponseCallbacks {
  onResponseStart(controller: Controller, statusCode: number, headers: Headers, statusMessage?: string): void;
  onResponseData(controller: Controller, chunk: Buffer): void;
  onResponseEnd(controller: Controller, trailers: Headers): void;
  onResponseError(controller: Controller, err: Error): void;
}
/** undici's DecoratorHandler forwards every callback (and adapts legacy handlers); its typings omit them. */
const ForwardingHandler = DecoratorHandler as unknown as new (
  handler: Dispatcher.DispatchHandler,
) => ResponseCallbacks;

/**
 * Decodes `Content-Encoding: gzip` response bodies as they stream (so a gzip'd watch yields events as
 * they arrive), removing `content-encoding`/`content-length` from the headers the caller sees. Our own
 * small replacement for undici's experimental decompress interceptor, which warns on every process.
 */
class GunzipHandler extends ForwardingHandler {
  #gunzip: Gunzip | undefined;
  #failed = false;

  override onResponseStart(
    controller: Controller,
    statusCode: number,
    headers: Headers,
    statusMessage?: string,
  ): void {
    const enc = headers['content-encoding'];
    if (
      typeof enc === 'string' &&
      enc.trim().toLowerCase() === 'gzip' &&
      statusCode !== 204 &&
      statusCode !== 304
    ) {
      const { 'content-encoding': _enc, 'content-length': _len, ...rest } = headers;
      const gunzip = createGunzip();
      this.#gunzip = gunzip;
      gunzip.on('data', (chunk: Buffer) => {
        if (!this.#failed) super.onResponseData(controller, chunk);
      });
      gunzip.on('error', (err: Error) => {
        if (this.#failed) return;
        this.#failed = true;
        super.onResponseError(controller, err);
        controller.abort(err);
      });
      super.onResponseStart(controller, statusCode, rest, statusMessage);
      return;
    }
    super.onResponseStart(controller, statusCode, headers, statusMessage);
  }

  override onResponseData(controller: Controller, chunk: Buffer): void {
    if (this.#gunzip) {
      if (!this.#failed) this.#gunzip.write(chunk);
      return;
    }
    super.onResponseData(controller, chunk);
  }

  override onResponseEnd(controller: Controller, trailers: Headers): void {
    const gunzip = this.#gunzip;
    if (!gunzip) {
      super.onResponseEnd(controller, trailers);
      return;
    }
    if (this.#failed) return;
    gunzip.once('end', () => {
      if (!this.#failed) super.onResponseEnd(controller, trailers);
    });
    gunzip.end();
  }

  override onResponseError(controller: Controller, err: Error): void {
    this.#gunzip?.destroy();
    if (this.#failed) return;
    this.#failed = true;
    super.onResponseError(controller, err);
  }
}

/** An undici interceptor that decodes gzip'd response bodies (see {@link GunzipHandler}). */
export function gunzipInterceptor(): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts, handler) => dispatch(opts, new GunzipHandler(handler));
}
