// A stand-in OIDC issuer on 127.0.0.1, as a CI platform runs one: a discovery document, a JWKS, and a
// token endpoint shaped like the GitHub Actions runtime's (ACTIONS_ID_TOKEN_REQUEST_URL/_TOKEN), signing
// RS256 tokens with GitHub's claim set.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

export interface SigningKeyPair {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export async function newKey(kid: string): Promise<SigningKeyPair> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

export interface StandInIssuer {
  url: string;
  /** The keys the JWKS lists; the first one signs. */
  keys: SigningKeyPair[];
  /** JWKS fetches so far. */
  jwksFetches: number;
  /** When set, JWKS requests are held and never answered. */
  hangJwks: boolean;
  /** The secret the token endpoint wants as its bearer (ACTIONS_ID_TOKEN_REQUEST_TOKEN). */
  runtimeToken: string;
  /** The claims a token of the token endpoint carries, beside aud, iss, exp, iat and nbf. */
  job: Record<string, unknown>;
  sign(claims?: Record<string, unknown>, key?: SigningKeyPair): Promise<string>;
  close(): Promise<void>;
}

export const GITHUB_JOB = {
  repository: 'octo-org/my-node',
  repository_owner: 'octo-org',
  workflow_ref: 'octo-org/my-node/.github/workflows/publish.yml@refs/tags/v1.0.0',
  job_workflow_ref: 'octo-org/my-node/.github/workflows/publish.yml@refs/tags/v1.0.0',
  ref: 'refs/tags/v1.0.0',
  sha: 'a'.repeat(40),
  run_id: '4242',
  environment: 'release',
};

export async function startIssuer(): Promise<StandInIssuer> {
  const held: Server[] = [];
  const issuer: StandInIssuer = {
    url: '',
    keys: [await newKey('key-1')],
    jwksFetches: 0,
    hangJwks: false,
    runtimeToken: 'runtime-secret',
    job: { ...GITHUB_JOB },
    async sign(claims = {}, key = issuer.keys[0]) {
      const now = Math.floor(Date.now() / 1000);
      const all: Record<string, unknown> = {
        ...issuer.job,
        iss: issuer.url,
        sub: `repo:${issuer.job.repository}:environment:${issuer.job.environment}`,
        iat: now,
        nbf: now - 5,
        exp: now + 300,
        ...claims,
      };
      for (const [name, value] of Object.entries(all)) if (value === undefined) delete all[name];
      return new SignJWT(all).setProtectedHeader({ alg: 'RS256', kid: key.kid }).sign(key.privateKey);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', issuer.url);
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (url.pathname === '/.well-known/openid-configuration')
      return json(200, { issuer: issuer.url, jwks_uri: `${issuer.url}/.well-known/jwks` });
    if (url.pathname === '/.well-known/jwks') {
      issuer.jwksFetches++;
      if (issuer.hangJwks) return; // held until the server closes
      return json(200, { keys: issuer.keys.map((k) => k.publicJwk) });
    }
    if (url.pathname === '/token') {
      if (request.headers.authorization !== `Bearer ${issuer.runtimeToken}`) return json(401, { message: 'bad token' });
      const audience = url.searchParams.get('audience') ?? undefined;
      return json(200, { count: 1, value: await issuer.sign(audience ? { aud: audience } : {}) });
    }
    json(404, {});
  });
  held.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return issuer;
}
