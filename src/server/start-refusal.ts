// A start the server refuses before its first request, because serving would do harm (another
// registry's storage, an admin token that would lock the fleet out): `serve` exits with `exit` and
// prints `fix`, which names what to change.
export class StartRefusedError extends Error {
  override name = 'StartRefusedError';
  constructor(
    message: string,
    /** A short word for --json errors. */
    readonly code: string,
    readonly fix: string,
    /** `conflict` (3): the state found belongs to another; `invalid` (2): the settings disagree with it. */
    readonly exit: 'conflict' | 'invalid',
  ) {
    super(message);
  }
}
