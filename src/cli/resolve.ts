// What the registry commands share: checking input against the contract before any request,
// and finding the publisher of a node and the id of a version.
import { ApiError } from '../client/errors.js';
import type { CallInput, Client } from '../client/index.js';
import type { Operation } from '../contract/operation.js';
import { normalizeVersion } from '../contract/version.js';
import type { NodeVersion } from '../contract/resources.js';
import { type ArgumentRule, checkArgument } from '../contract/arguments.js';
import { notFoundHint } from './commands/node-show.js';
import { CliError, EXIT, flagForField, invalidInput, toCliError } from './errors.js';
import { type Route, routes } from '../client/routes.js';
import type { OperationId } from '../contract/operation-checks.js';

/**
 * Checks the parts of a call's input that are given with the operation's generated checks, so that bad
 * input exits 2 before any request (even the look-ups a command makes first), naming its first problem
 * as the server would. `flags` names the flag or argument to fix where it is not simply the field's name
 * as a flag.
 */
export async function precheck<O extends Operation>(
  route: Route<O>,
  input: CallInput<O>,
  flags: Record<string, string> = {},
): Promise<CallInput<O>> {
  // the index of every operation's checks, loaded by a command that sends a request it checks
  const { checkRequestPart } = await import('../contract/operation-checks.js');
  const checked: Record<string, unknown> = {};
  for (const part of ['params', 'query', 'body'] as const) {
    if (input[part] === undefined) continue; // checked when given: a command may check its body before it knows the path
    const result = await checkRequestPart(route.id as OperationId, part, input[part]);
    if ('refusal' in result) {
      const { path, message } = result.refusal;
      throw invalidInput(`invalid ${flags[path] ?? flagForField(path)} (${path}): ${message}`);
    }
    checked[part] = result.value;
  }
  // what the checks output (defaults filled in) is what is sent, and it meets the schemas' input
  return checked as CallInput<O>;
}

/**
 * Checks an id or version given as an argument or flag against its wire rule; `name` is how the user
 * wrote it. Returns the value as the rule reads it (a version `1.0` as `1.0.0`, as publish does), or
 * refuses it in the words the server gives the same field.
 */
function checkRule(id: ArgumentRule, value: string, name: string): string {
  const checked = checkArgument(id, value);
  if ('refusal' in checked) throw invalidInput(`invalid ${name} "${value}": ${checked.refusal.message}`);
  return checked.value;
}
export const checkNodeId = (value: string, name = '<nodeId>') => checkRule('NodeId', value, name);
export const checkPublisherId = (value: string, name = '<publisherId>') => checkRule('PublisherId', value, name);
export const checkVersion = (value: string, name = '<version>') => checkRule('Semver', value, name);

/** `--tags a,b` → `['a', 'b']`; an empty value clears the field (null). */
export function listOption(value: string | undefined): string[] | null | undefined {
  if (value === undefined) return undefined;
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length ? items : null;
}

/** A text option: an empty value clears the field (null). */
export function textOption(value: string | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  return value === '' ? null : value;
}

/** Drops the keys whose value is undefined: updates send only the fields given. */
export function given<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The publisher ./pyproject.toml names (`[tool.nodereg] publisher`, else `[tool.comfy] PublisherId`), if any. */
export async function manifestPublisher(dir = process.cwd()): Promise<string | undefined> {
  const { readManifest } = await import('../package/manifest.js');
  return readManifest(dir).publisherId;
}

/** The publisher to address a node's routes with: the flag, else the node's own, else the manifest's. */
export async function nodePublisher(client: Client, nodeId: string, flag?: string): Promise<string> {
  if (flag) return flag;
  let notFound: unknown;
  try {
    const node = await client.call(routes.getNode, { params: { nodeId } });
    if (node.publisher?.id) return node.publisher.id;
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw toCliError(error);
    notFound = error;
  }
  const fromManifest = await manifestPublisher();
  if (fromManifest) return fromManifest;
  if (notFound) throw toCliError(notFound, { 404: notFoundHint(nodeId) });
  throw invalidInput(`cannot tell which publisher node ${nodeId} belongs to`, 'pass --publisher <id>');
}

/** The version of a node whose semver is `version`, written as the registry reads it (`v1.2` is 1.2.0). */
export function findVersion(versions: NodeVersion[], nodeId: string, version: string): NodeVersion {
  const wanted = normalizeVersion(version)?.version ?? version;
  const found = versions.find((v) => v.version === wanted);
  if (!found) {
    throw new CliError(
      `node ${nodeId} has no version ${wanted}`,
      EXIT.notFound,
      'not_found',
      `list them with \`nodereg node versions ${nodeId}\``,
      404,
    );
  }
  return found;
}
