/** Errors from the fault-injection API. `code` is stable: `EINVALID` (a malformed rule or argument, the
 * message names the field) or `ENOTSUPPORTED` (the server behind the injector lacks the operation). */
export class FaultError extends Error {
  readonly code: 'EINVALID' | 'ENOTSUPPORTED';
  constructor(code: 'EINVALID' | 'ENOTSUPPORTED', message: string) {
    super(message);
    this.name = 'FaultError';
    this.code = code;
  }
}
