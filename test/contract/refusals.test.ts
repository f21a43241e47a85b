// Server answers whose words the contract holds (src/contract/errors.ts): the server renders them as
// they are, so their code, status and text are fixed here.
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS, tooManyPipelined, tooManyTokens } from '../../src/contract/errors.js';
import { TOKENS_MAX } from '../../src/contract/limits.js';

describe('refusals worded by the contract', () => {
  it('a token past TOKENS_MAX is 409 conflict, naming whose tokens, with a hint that runs', () => {
    expect(ERROR_STATUS[tooManyTokens().code]).toBe(409);
    expect(tooManyTokens().message).toBe(`you have ${TOKENS_MAX} live tokens, the most there may be`);
    expect(tooManyTokens('acme').message).toBe(`publisher acme has ${TOKENS_MAX} live tokens, the most there may be`);
    expect(tooManyTokens().hint).toBe(
      'revoke one you no longer use first (`nodereg token list`, `nodereg token revoke`)',
    );
  });

  it('a request pipelined past the cap is 503 unavailable, to be retried after 1 s', () => {
    const refusal = tooManyPipelined(32);
    expect(ERROR_STATUS[refusal.code]).toBe(503);
    expect(refusal.retryAfter).toBe(1);
    expect(refusal.message).toBe(
      'more than 32 requests of this connection are waiting for their answers; read them before sending more, or open another connection',
    );
  });
});
