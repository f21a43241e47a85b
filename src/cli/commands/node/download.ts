// `nodereg node download <node>`: which version to fetch (install's Active one, or the one named, also
// as a member of its publisher), where to write it, and the hints of a 404. Loaded when the command runs.
import type { NodeVersion } from '../../../contract/resources.js';
import { formatSize } from '../../../contract/size.js';
import { normalizeVersion } from '../../../contract/version.js';
import { ApiError } from '../../../client/errors.js';
import { routes } from '../../../client/routes.js';
import type { Ctx } from '../../context.js';
import { CliError, EXIT, invalidInput, toCliError } from '../../errors.js';
import { outFile, refuseStdoutOut } from '../../out-path.js';
import { checkNodeId, checkVersion } from '../../resolve.js';
import { saveArchive } from './save-archive.js';
import { nodeVersions, notFoundHint } from '../node-show.js';

/** Downloads `spec` (`<nodeId>` or `<nodeId>@<version>`) to `o.out`, checked, and reports it. */
export async function downloadNode(ctx: Ctx, spec: string, o: { out?: string }): Promise<void> {
  const at = spec.lastIndexOf('@');
  const nodeId = at > 0 ? spec.slice(0, at) : spec;
  const version = at > 0 ? await checkVersion(spec.slice(at + 1), '@<version>') : undefined;
  await checkNodeId(nodeId, '<nodeId>');
  if (o.out === '') throw invalidInput('--out must name a file');
  refuseStdoutOut(o.out);
  const client = await ctx.client();
  // The hint is asked for only when it is shown (a registry's 404), and not at all for a version already read.
  const notFound = async (error: unknown, named?: NodeVersion) =>
    toCliError(
      error,
      error instanceof ApiError && error.status === 404
        ? { 404: await downloadNotFoundHint(client, nodeId, version, named) }
        : {},
    );
  let found: NodeVersion;
  let notActive: unknown; // install's 404 for the version asked, downloaded as a member instead
  try {
    found = await client.call(routes.installNode, { params: { nodeId }, query: { version } });
  } catch (error) {
    // install gives Active versions only; the archive route also serves the others to the
    // publisher's members and admins, with their token: a version asked by name is tried there.
    const named =
      version && client.hasToken && error instanceof ApiError && error.status === 404
        ? await client.call(routes.getNodeVersion, { params: { nodeId, version } }).catch(() => undefined)
        : undefined;
    if (!named?.downloadUrl) throw await notFound(error, named);
    found = named;
    notActive = error;
  }
  if (!found.downloadUrl)
    throw new CliError(`the registry gave no download URL for ${nodeId} ${found.version}`, EXIT.failure, 'internal');
  // The file is named after the version answered: one that is not a version (`../../x`) would name a path elsewhere.
  if (!normalizeVersion(String(found.version)))
    throw new CliError(
      `the registry answered a version that is not one: "${found.version}"`,
      EXIT.failure,
      'bad_answer',
      'check the registry URL',
    );
  const name = `${nodeId}-${found.version}.zip`;
  const file = outFile(o.out, name);
  const saved = await saveArchive(client, found, file).catch(async (error) => {
    // Not a member after all: the archive route hid the version, as install did.
    if (notActive !== undefined && error instanceof CliError && error.status === 404)
      throw await notFound(notActive, found);
    throw error;
  });
  if (notActive !== undefined)
    ctx.out.warn(
      `${nodeId} ${found.version} is not active (${found.status ?? 'status unknown'}): downloaded with your token, as a member of its publisher or an admin`,
    );
  const summary = {
    node_id: found.node_id ?? nodeId,
    version: found.version,
    file: saved.file,
    size: saved.size,
    archive_sha256: saved.sha256,
    entries: saved.entries,
    download_url: found.downloadUrl,
  };
  ctx.out.result(
    summary,
    `downloaded ${summary.node_id} ${summary.version} to ${file} (${formatSize(saved.size)}, ${saved.entries} entr${saved.entries === 1 ? 'y' : 'ies'}, sha256 ${saved.sha256.slice(0, 12)}…${found.archive_sha256 ? ' verified' : ''})`,
  );
}

/**
 * The hint for a download answered 404: an unknown node is searched for; a node that exists but has
 * no version to download (none Active yet: its archive never arrived, or it awaits review) has its
 * versions listed, with their status. `named`: the version asked for, read already (so both exist).
 */
async function downloadNotFoundHint(
  client: Awaited<ReturnType<Ctx['client']>>,
  nodeId: string,
  version: string | undefined,
  named?: NodeVersion,
): Promise<string> {
  const exists =
    named !== undefined ||
    (await client.call(routes.getNode, { params: { nodeId } }).then(
      () => true,
      () => false,
    ));
  if (!exists) return notFoundHint(nodeId);
  if (version && !named) {
    const wanted = normalizeVersion(version)?.version;
    const versions = await nodeVersions(client, nodeId).catch(() => undefined);
    if (versions && !versions.some((v) => v.version === wanted))
      return `${nodeId} has no version ${version}: list its versions with \`nodereg node versions ${nodeId}\``;
  }
  const what = version ? `version ${version} is not active` : 'it has no active version yet';
  return `${what}: a version is active once its archive is uploaded (and approved, where the registry reviews by hand); see each version's status with \`nodereg node versions ${nodeId}\``;
}
