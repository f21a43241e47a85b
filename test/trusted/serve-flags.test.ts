// `serve --oidc-issuer NAME=URL` and `--oidc-audience` (or their environment variables) as the server takes them.
import { describe, expect, it } from 'vitest';
import { CliError } from '../../src/cli/errors.js';
import { oidcOptionsFromFlags } from '../../src/cli/serve/oidc-flags.js';

describe('serve --oidc-issuer', () => {
  it('names issuers by NAME=URL, from the flags (NODEREG_OIDC_ISSUERS is comma-separated: test/server/serve-config.test.ts)', () => {
    expect(oidcOptionsFromFlags({ oidcIssuer: ['gitlab=https://gitlab.example.com'], oidcAudience: 'reg' })).toEqual({
      oidcIssuers: { gitlab: 'https://gitlab.example.com' },
      oidcAudience: 'reg',
    });
    expect(
      oidcOptionsFromFlags({ oidcIssuer: ['a=http://127.0.0.1:1', 'b=https://b.example'], oidcAudience: 'x' }),
    ).toEqual({ oidcIssuers: { a: 'http://127.0.0.1:1', b: 'https://b.example' }, oidcAudience: 'x' });
    expect(oidcOptionsFromFlags({})).toEqual({});
  });

  it.each(['gitlab', '=https://x.example', 'gitlab=ftp://x.example', 'bad name=https://x.example'])(
    'refuses %s as a usage error naming the flag',
    (pair) => {
      let error: unknown;
      try {
        oidcOptionsFromFlags({ oidcIssuer: [pair] });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(CliError);
      expect((error as CliError).exitCode).toBe(2);
      expect((error as CliError).message).toContain('--oidc-issuer');
    },
  );
});
