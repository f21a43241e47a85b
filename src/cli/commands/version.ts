import { Option, type Command } from 'commander';
import { NODE_VERSION_STATUS, SEMVER_PATTERN } from '../../contract/limits.js';
import type { NodeVersion } from '../../contract/resources.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT, invalidInput, toCliError } from '../errors.js';
import { changelogOfFlags } from '../project.js';
import { fullStatus, shortStatus, statusText } from '../format.js';
import {
  checkNodeId,
  checkPublisherId,
  checkVersion,
  findVersion,
  given,
  nodePublisher,
  precheck,
} from '../resolve.js';
import { examples } from '../examples.js';
import { nodeVersions } from './node-show.js';
import { routes } from '../../client/routes.js';
import { registerAppeal } from './version-appeal.js';
import { registerWithdraw } from './version/withdraw.js';
import { registerBump } from './version/bump.js';

interface UpdateOptions {
  publisher?: string;
  changelog?: string;
  changelogFile?: string;
  deprecate?: boolean;
  undeprecate?: boolean;
  status?: string;
  reason?: string;
}

type VersionStatus = (typeof NODE_VERSION_STATUS)[number];

export function register(program: Command, ctx: Ctx): void {
  const version = examples(
    program
      .command('version')
      .description("raise the project's version; update a version's changelog, deprecation or status, or withdraw it"),
    [
      'nodereg version update my-node 1.2.0 --changelog "Fixes the preview"',
      'nodereg version withdraw my-node 1.2.0',
      'nodereg version deprecate my-node "<2.0.0"',
      'nodereg version bump patch --git',
    ],
  );

  registerUpdate(version, ctx);
  registerDeprecate(version, ctx);
  registerWithdraw(version, ctx);
  registerAppeal(version, ctx);
  registerBump(version, ctx);
}

function registerUpdate(version: Command, ctx: Ctx): void {
  examples(
    version
      .command('update <nodeId> <version>')
      .description(
        'update one version: changelog, deprecation, and (admins) status — how versions under manual review are approved',
      )
      .option('--publisher <id>', "the node's publisher (default: the node's own)")
      .addOption(new Option('--changelog <text>', 'the new changelog').conflicts('changelogFile'))
      .option('--changelog-file <file>', 'read the changelog from a file ("-" for stdin)')
      .addOption(new Option('--deprecate', 'mark the version deprecated').conflicts('undeprecate'))
      .option('--undeprecate', 'clear the deprecated flag')
      .addOption(
        new Option('--status <status>', 'version status (admins only)').choices(NODE_VERSION_STATUS.map(shortStatus)),
      )
      .option('--reason <text>', 'status reason shown with the version (admins only)')
      .action(async (nodeId: string, semver: string, o: UpdateOptions) => {
        await checkNodeId(nodeId);
        const wanted = await checkVersion(semver);
        if (o.publisher) await checkPublisherId(o.publisher, '--publisher');
        const body = given({
          changelog: (await changelogOfFlags(ctx, o))?.text,
          deprecated: o.deprecate ? true : o.undeprecate ? false : undefined,
          status: o.status ? (fullStatus(NODE_VERSION_STATUS, o.status) as VersionStatus) : undefined,
          status_reason: o.reason,
        });
        if (Object.keys(body).length === 0) {
          throw invalidInput(
            'nothing to update',
            'pass --changelog, --changelog-file, --deprecate, --undeprecate or --status',
          );
        }
        if (body.status === 'NodeVersionStatusDeleted')
          // Withdrawing is for good: the command that says so and asks first does it.
          throw invalidInput(
            '--status deleted withdraws the version for good, which `version withdraw` does, after saying so',
            `run \`nodereg version withdraw ${nodeId} ${semver}\``,
          );
        const checked = await precheck(routes.updateVersion, { body }, { status_reason: '--reason' });
        const client = await ctx.client({ requireToken: true });
        const [publisherId, versions] = await Promise.all([
          nodePublisher(client, nodeId, o.publisher),
          nodeVersions(client, nodeId),
        ]);
        const target = findVersion(versions, nodeId, wanted);
        const updated = await client
          .call(routes.updateVersion, { params: { publisherId, nodeId, versionId: target.id }, body: checked.body })
          .catch((error) => {
            throw toCliError(error, {
              403: body.status || body.status_reason ? 'setting a status or reason takes an admin token' : undefined,
            });
          });
        ctx.out.result(
          updated,
          `updated ${nodeId} ${updated.version}: ${Object.keys(body).join(', ')} (status ${statusText(ctx.out, updated.status)}${updated.deprecated ? ', deprecated' : ''})`,
        );
      }),
    [
      'nodereg version update my-node 1.2.0 --changelog "Fixes the preview"',
      'git log --oneline v1.1.0..v1.2.0 | nodereg version update my-node 1.2.0 --changelog-file -',
      'nodereg version update my-node 1.2.0 --status active --reason "reviewed"   # admin',
    ],
  );
}

function registerDeprecate(version: Command, ctx: Ctx): void {
  examples(
    version
      .command('deprecate <nodeId> <versionOrRange>')
      .description('deprecate one version or every version in a semver range (prereleases included), or undo it')
      .option('--publisher <id>', "the node's publisher (default: the node's own)")
      .option('--undo', 'clear the deprecated flag instead')
      .action(async (nodeId: string, wanted: string, o: { publisher?: string; undo?: boolean }) => {
        await checkNodeId(nodeId);
        if (o.publisher) await checkPublisherId(o.publisher, '--publisher');
        const matches = await versionMatcher(wanted);
        const deprecated = !o.undo;
        const client = await ctx.client({ requireToken: true });
        const [publisherId, versions] = await Promise.all([
          nodePublisher(client, nodeId, o.publisher),
          nodeVersions(client, nodeId),
        ]);
        const chosen = versions.filter((v) => matches(v.version));
        if (chosen.length === 0) {
          throw new CliError(
            `no version of ${nodeId} matches ${wanted}`,
            EXIT.notFound,
            'not_found',
            `list them with \`nodereg node versions ${nodeId}\``,
          );
        }
        // a version already as asked is left alone, and reported as such, not as changed now
        const unchanged = chosen.filter((v) => Boolean(v.deprecated) === deprecated);
        const done: NodeVersion[] = [];
        for (const v of chosen.filter((c) => !unchanged.includes(c))) {
          try {
            done.push(
              await client.call(routes.updateVersion, {
                params: { publisherId, nodeId, versionId: v.id },
                body: { deprecated },
              }),
            );
          } catch (error) {
            const cliError = toCliError(error);
            const sofar = done.length
              ? `; ${done.map((d) => d.version).join(', ')} already done, the rest left as they were`
              : '';
            throw new CliError(
              `${v.version}: ${cliError.message}${sofar}`,
              cliError.exitCode,
              cliError.code,
              cliError.hint,
              cliError.status,
            );
          }
        }
        const verb = deprecated ? 'deprecated' : 'undeprecated';
        const count = (n: number) => `${n} version${n === 1 ? '' : 's'}`;
        const lines = [
          ...(done.length ? [`${verb} ${count(done.length)} of ${nodeId}:`, ...done.map((d) => `  ${d.version}`)] : []),
          ...(unchanged.length
            ? [
                `already ${verb}, left as ${unchanged.length === 1 ? 'it was' : 'they were'}:`,
                ...unchanged.map((v) => `  ${v.version}`),
              ]
            : []),
        ];
        ctx.out.result(
          {
            node_id: nodeId,
            publisher_id: publisherId,
            target: wanted,
            deprecated,
            versions: done,
            unchanged: unchanged.map((v) => v.version),
          },
          lines.join('\n'),
        );
      }),
    [
      'nodereg version deprecate my-node 1.2.0',
      'nodereg version deprecate my-node "<2.0.0"      # every 1.x and 0.x, prereleases too',
      'nodereg version deprecate my-node 1.x --undo',
    ],
  );
}

/** A test for an exact version or a semver range (prereleases included); anything else exits 2. */
async function versionMatcher(wanted: string): Promise<(version: string) => boolean> {
  if (new RegExp(SEMVER_PATTERN).test(wanted)) {
    const exact = wanted.replace(/^v/, '');
    return (version) => version === exact;
  }
  const { default: semver } = await import('semver');
  const range = semver.validRange(wanted, { includePrerelease: true });
  if (range === null) {
    throw invalidInput(
      `"${wanted}" is neither a version nor a semver range`,
      'e.g. 1.2.0, "<2.0.0", 1.x, ">=1.0.0 <1.5.0"',
    );
  }
  return (version) => semver.satisfies(version, range, { includePrerelease: true });
}
