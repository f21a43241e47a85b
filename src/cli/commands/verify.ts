// `nodereg verify NODE[@VERSION]` or `verify node.zip --node NODE@VERSION`: checks a version's
// provenance (DESIGN.md §15): the registry's signature over the statement's exact bytes (DSSE), and the
// archive's SHA-256 against the statement's subject; prints the repository and commit it was built from.
import { createHash, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Client } from '../../client/index.js';
import { routes } from '../../client/routes.js';
import { IN_TOTO_STATEMENT_TYPE } from '../../contract/limits.js';
import type { ProvenanceEnvelope } from '../../contract/trust.js';
import { openEnvelope, publicKeyFrom } from '../../shared/dsse.js';
import type { Ctx } from '../context.js';
import { CliError, invalidInput, toCliError } from '../errors.js';
import { examples } from '../examples.js';
import { EXIT } from '../exit-codes.js';
import { checkNodeId, checkVersion } from '../resolve.js';

interface VerifyOptions {
  node?: string;
  expectRepo?: string;
}

/** What the statement says of the job, as verify prints it. */
interface Provenance {
  sha256: string;
  repository: string;
  commit: string;
  ref: string;
  workflow: string;
  run_id: string;
  issuer: string;
}

const refused = (message: string) => new CliError(`verification failed: ${message}`, EXIT.failure, 'unverified');

/** The statement's subject and the job it names, read leniently: a missing field is a failed check. */
function readStatement(payload: Buffer, subjectName: string): Provenance {
  let statement: any;
  try {
    statement = JSON.parse(payload.toString('utf8'));
  } catch {
    throw refused('the statement is not JSON');
  }
  if (statement?._type !== IN_TOTO_STATEMENT_TYPE) throw refused('the statement is not an in-toto v1 statement');
  const subject = statement.subject?.find((s: { name?: string }) => s?.name === subjectName);
  if (!subject) throw refused(`the statement is not about ${subjectName}`);
  const build = statement.predicate?.buildDefinition ?? {};
  const workflow = build.externalParameters?.workflow ?? {};
  return {
    sha256: String(subject.digest?.sha256 ?? ''),
    repository: String(workflow.repository ?? ''),
    commit: String(build.resolvedDependencies?.[0]?.digest?.gitCommit ?? ''),
    ref: String(workflow.ref ?? ''),
    workflow: String(workflow.path ?? ''),
    run_id: String(statement.predicate?.runDetails?.metadata?.invocationId ?? ''),
    issuer: String(build.internalParameters?.issuer ?? ''),
  };
}

/** The archive's bytes: the file given, or the version's download. */
async function archiveBytes(
  client: Client,
  file: string | undefined,
  downloadUrl: string | undefined,
): Promise<Buffer> {
  if (file !== undefined) {
    try {
      return readFileSync(file);
    } catch (error) {
      throw invalidInput(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  }
  if (!downloadUrl) throw refused('the registry has no archive of this version');
  const answer = await client.download(downloadUrl);
  const chunks: Buffer[] = [];
  for await (const chunk of answer.body) chunks.push(chunk as Buffer);
  if (answer.status !== 200) throw refused(`the archive's download answered ${answer.status}`);
  return Buffer.concat(chunks);
}

async function verify(ctx: Ctx, target: string, o: VerifyOptions): Promise<void> {
  // (a local archive names its version with --node ID@VERSION: --version is the program's own flag)
  const file = target.endsWith('.zip') ? target : undefined;
  const spec = file ? (o.node ?? '') : target;
  const at = spec.lastIndexOf('@');
  const nodeId = at > 0 ? spec.slice(0, at) : spec;
  let version = at > 0 ? spec.slice(at + 1) : undefined;
  if (file && version === undefined)
    throw invalidInput('verifying a file needs --node NODE@VERSION', `nodereg verify ${target} --node my-node@1.0.0`);
  await checkNodeId(nodeId, file ? '--node' : '<node>');
  if (version !== undefined) version = await checkVersion(version, file ? '--node @<version>' : '@<version>');
  const client = await ctx.client();
  const found = await (version === undefined
    ? client.call(routes.getNode, { params: { nodeId } }).then((node) => node.latest_version)
    : client.call(routes.getNodeVersion, { params: { nodeId, version } })
  ).catch((error) => {
    throw toCliError(error);
  });
  if (!found) throw new CliError(`${nodeId} has no published version`, EXIT.notFound, 'not_found');
  const versionId = found.version;
  const [envelope, keys] = await Promise.all([
    client.call(routes.getVersionProvenance, { params: { nodeId, version: versionId } }),
    client.call(routes.getRegistryKeys, {}),
  ]).catch((error) => {
    throw toCliError(error);
  });
  const bytes = await archiveBytes(client, file, found.downloadUrl);
  const provenance = check(envelope, keys.keys, `${found.node_id ?? nodeId}@${versionId}`, bytes);
  if (o.expectRepo !== undefined && provenance.repository.toLowerCase() !== o.expectRepo.toLowerCase())
    throw refused(`${nodeId} ${versionId} was built from ${provenance.repository}, not ${o.expectRepo}`);
  ctx.out.result({ verified: true, node_id: nodeId, version: versionId, ...provenance }, () =>
    [
      `verified ${nodeId} ${versionId}: signed by the registry, archive sha256 ${provenance.sha256}`,
      `repository ${provenance.repository}`,
      `commit ${provenance.commit}`,
      `ref ${provenance.ref}, workflow ${provenance.workflow}, run ${provenance.run_id}`,
    ].join('\n'),
  );
}

/** The signature by one of the registry's keys, then the archive's SHA-256 against the subject. */
function check(
  envelope: ProvenanceEnvelope,
  keys: { keyid: string; public_key: string }[],
  subjectSuffix: string,
  bytes: Buffer,
): Provenance {
  const known = new Map<string, KeyObject>(keys.map((k) => [k.keyid, publicKeyFrom(k.public_key)]));
  const opened = openEnvelope(envelope, known);
  if ('problem' in opened) throw refused(opened.problem);
  const payload = opened.payload;
  const statement = JSON.parse(payload.toString('utf8')) as { subject?: { name?: string }[] };
  const name = statement.subject?.map((s) => s?.name).find((n) => n?.endsWith(`/${subjectSuffix}/node.zip`));
  const provenance = readStatement(payload, name ?? `…/${subjectSuffix}/node.zip`);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (sha256 !== provenance.sha256)
    throw refused(`the archive's sha256 is ${sha256}, the signed statement names ${provenance.sha256}`);
  return provenance;
}

export function register(program: Command, ctx: Ctx): void {
  examples(
    program
      .command('verify <target>')
      .description(
        "check a version's provenance: the registry's signature and the archive's sha256; prints the repository and commit it was built from",
      )
      .option('--node <id@version>', 'the node and version a local node.zip is')
      .option('--expect-repo <owner/name>', 'fail unless the version was built from this repository')
      .action((target: string, o: VerifyOptions) => verify(ctx, target, o)),
    [
      'nodereg verify my-node@1.0.0',
      'nodereg verify my-node --expect-repo acme/my-node',
      'nodereg verify node.zip --node my-node@1.0.0',
    ],
  );
}
