// Trusted publishing from CI (DESIGN.md §15): in GitHub Actions with `permissions: id-token: write` and
// no NODEREG_TOKEN (or with --trusted), publish asks the runner for an OIDC token for the registry,
// exchanges it at POST /oidc/exchange, and publishes with the 15-minute token it gets.
import type { Client } from '../../client/index.js';
import { routes } from '../../client/routes.js';
import type { Ctx } from '../context.js';
import { CliError, invalidInput, toCliError } from '../errors.js';
import { EXIT } from '../exit-codes.js';

const NO_RUNNER =
  'a trusted publish needs the OIDC token of a GitHub Actions job: ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN are not set';
const RUNNER_HINT = 'give the job `permissions: id-token: write` (see docs/ci.md), or publish with NODEREG_TOKEN';

/** The client publish sends with: the token configured, or one exchanged for the job's OIDC token. */
export async function publishClient(
  ctx: Ctx,
  trusted: boolean | undefined,
  target: { publisherId: string; nodeId: string },
): Promise<Client> {
  const { env } = ctx;
  const runner = env.ACTIONS_ID_TOKEN_REQUEST_URL && env.ACTIONS_ID_TOKEN_REQUEST_TOKEN;
  const connection = await ctx.connection();
  if (!trusted && !(runner && !connection.token)) return ctx.client({ requireToken: true });
  if (!runner) throw invalidInput(NO_RUNNER, RUNNER_HINT);
  const oidcToken = await requestRunnerToken(env.ACTIONS_ID_TOKEN_REQUEST_URL!, runner, connection.registry);
  const anonymous = await ctx.client({ token: '' });
  const exchanged = await anonymous
    .call(routes.exchangeOidcToken, {
      body: { token: oidcToken, publisher_id: target.publisherId, node_id: target.nodeId },
    })
    .catch((error) => {
      throw toCliError(error);
    });
  ctx.out.info(`publishing as the CI workflow trusted by ${exchanged.publisher_id} (token valid 15 minutes)`);
  return ctx.client({ requireToken: true, token: exchanged.token });
}

/** The runner's OIDC token for `audience` (the Actions runtime's token endpoint). */
async function requestRunnerToken(requestUrl: string, requestToken: string, audience: string): Promise<string> {
  const url = new URL(requestUrl);
  url.searchParams.set('audience', audience);
  let answer: Response;
  try {
    answer = await fetch(url, {
      headers: { authorization: `Bearer ${requestToken}`, accept: 'application/json' },
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new CliError(
      `the runner's OIDC token endpoint could not be reached: ${(error as Error).message}`,
      EXIT.failure,
      'network',
      RUNNER_HINT,
    );
  }
  const body = (await answer.json().catch(() => ({}))) as { value?: unknown };
  if (!answer.ok || typeof body.value !== 'string')
    throw new CliError(
      `the runner refused an OIDC token (HTTP ${answer.status})`,
      EXIT.auth,
      'unauthorized',
      RUNNER_HINT,
    );
  return body.value;
}
