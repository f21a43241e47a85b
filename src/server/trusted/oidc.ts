// The OIDC tokens CI platforms issue, checked with jose: the issuer must be one the registry knows by
// name, the signature a key of its JWKS (found through its discovery document, fetched within a timeout
// and kept; a key id not seen yet fetches it again, at most once per cooldown), the algorithm an
// asymmetric one, and aud, exp and nbf. Every refusal names the claim.
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import { HttpError } from '../errors.js';

export interface OidcOptions {
  /** Issuers by name → issuer URL (the `iss` of their tokens). */
  issuers: Record<string, string>;
  /** The `aud` tokens must carry. */
  audience(): string;
  /** How long a fetch of an issuer's discovery document or JWKS may take. */
  timeoutMs: number;
  /** After a fetch of a JWKS, how long an unknown key id waits before it fetches again. */
  cooldownMs: number;
}

/** Asymmetric only: `none`, and HS256 with the issuer's public key as the secret, are refused. */
const ALGORITHMS = ['RS256', 'ES256'];

export interface VerifiedToken {
  issuerName: string;
  claims: JWTPayload & Record<string, unknown>;
}

const refused = (claim: string, message: string, hint?: string) =>
  new HttpError('unauthorized', message, [{ path: `token.${claim}`, message }], hint);

const trimSlash = (url: string) => url.replace(/\/+$/, '');

export interface OidcVerifier {
  verify(token: string): Promise<VerifiedToken>;
}

export function createOidcVerifier(options: OidcOptions): OidcVerifier {
  const keySets = new Map<string, Promise<ReturnType<typeof createRemoteJWKSet>>>();

  /** The JWKS of an issuer, found through its discovery document once; a failed lookup is tried again next time. */
  function keySet(issuer: string) {
    let found = keySets.get(issuer);
    if (!found) {
      found = discover(issuer);
      keySets.set(issuer, found);
      found.catch(() => keySets.delete(issuer));
    }
    return found;
  }

  async function discover(issuer: string) {
    const url = `${trimSlash(issuer)}/.well-known/openid-configuration`;
    const answer = await fetch(url, { signal: AbortSignal.timeout(options.timeoutMs) });
    if (!answer.ok) throw new Error(`${url} answered ${answer.status}`);
    const document = (await answer.json()) as { jwks_uri?: unknown };
    if (typeof document.jwks_uri !== 'string') throw new Error(`${url} names no jwks_uri`);
    return createRemoteJWKSet(new URL(document.jwks_uri), {
      timeoutDuration: options.timeoutMs,
      cooldownDuration: options.cooldownMs,
    });
  }

  function issuerNamed(iss: unknown): { name: string; url: string } {
    const found = Object.entries(options.issuers).find(([, url]) => trimSlash(url) === trimSlash(String(iss)));
    if (found) return { name: found[0], url: found[1] };
    const known = Object.entries(options.issuers)
      .map(([name, url]) => `${name}=${url}`)
      .join(', ');
    throw refused(
      'iss',
      `the token's iss claim ${JSON.stringify(iss)} is not an issuer this registry trusts (it knows ${known})`,
      'an operator adds one with nodereg serve --oidc-issuer <name>=<url>',
    );
  }

  return {
    async verify(token) {
      let unverified: JWTPayload;
      try {
        unverified = decodeJwt(token);
      } catch {
        throw refused('jwt', 'the token is not a JWT (three base64url parts, the middle one JSON claims)');
      }
      const issuer = issuerNamed(unverified.iss);
      let jwks: Awaited<ReturnType<typeof keySet>>;
      try {
        jwks = await keySet(issuer.url);
      } catch (error) {
        throw unreachable(issuer.name, error);
      }
      try {
        const { payload } = await jwtVerify(token, jwks, {
          issuer: unverified.iss as string,
          audience: options.audience(),
          algorithms: ALGORITHMS,
          requiredClaims: ['exp', 'iat'],
        });
        return { issuerName: issuer.name, claims: payload as VerifiedToken['claims'] };
      } catch (error) {
        throw joseRefusal(error, issuer.name, options.audience(), keyIdOf(token));
      }
    },
  };
}

function keyIdOf(token: string): string {
  try {
    return JSON.stringify(decodeProtectedHeader(token).kid ?? null);
  } catch {
    return 'null';
  }
}

const unreachable = (name: string, error: unknown) =>
  new HttpError(
    'unavailable',
    `the keys of issuer ${name} could not be fetched (${error instanceof Error ? error.message : String(error)}); nothing was exchanged`,
    undefined,
    'retry shortly',
    { 'Retry-After': '5' },
  );

/** A refusal of jose's, as the error shape says it: the claim, and what was wrong with it. */
function joseRefusal(error: unknown, issuer: string, audience: string, kid: string): HttpError {
  if (error instanceof errors.JWTExpired) return refused('exp', `the token expired (exp ${error.payload.exp})`);
  if (error instanceof errors.JWTClaimValidationFailed) {
    const { claim, payload } = error;
    if (claim === 'nbf') return refused('nbf', `the token is not valid yet (nbf ${payload.nbf} is in the future)`);
    if (claim === 'aud')
      return refused(
        'aud',
        `the token's aud claim ${JSON.stringify(payload.aud)} is not this registry's audience ${JSON.stringify(audience)}`,
        `request the token with audience ${audience}`,
      );
    return refused(claim, `the token's ${claim} claim is not acceptable: ${error.message}`);
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported)
    return refused('alg', `the token's algorithm is not accepted: only ${ALGORITHMS.join(' and ')} are`);
  if (error instanceof errors.JWKSNoMatchingKey)
    return refused('kid', `the token is signed by key ${kid}, which is not among issuer ${issuer}'s keys`);
  if (error instanceof errors.JWKSTimeout) return unreachable(issuer, error);
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return refused('signature', `the token's signature does not verify with issuer ${issuer}'s key`);
  if (error instanceof errors.JOSEError) return refused('jwt', `the token is refused: ${error.message}`);
  if (error instanceof Error && /fetch|network|ECONN|abort/i.test(`${error.name} ${error.message}`))
    return unreachable(issuer, error);
  throw error;
}
