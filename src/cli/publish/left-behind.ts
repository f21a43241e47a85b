// The parts of publish that say what a failure leaves behind, and the small pieces its steps share.
import type { Client } from '../../client/index.js';
import type { RegistryLimits } from '../../contract/resources.js';
import { formatSize } from '../../contract/size.js';
import { DEFAULT_SCAN_FAIL_ON } from '../../shared/scan.js';
import type { ArchiveResult } from '../../package/zip.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT, exitCodeForSignal } from '../errors.js';
import { shellWord } from '../invocation.js';
import { LIMITS_HINT, limitProblems } from '../registry-limits.js';
import type { PublishOptions } from './options.js';

/** The command that resumes a failed upload: the same publish, which gets a fresh upload URL. */
export function resumeCommand(ctx: Ctx, dir: string | undefined, options: PublishOptions): string {
  const parts = ['nodereg', 'publish'];
  if (dir) parts.push(shellWord(dir));
  // The archive may have arrived before the failure: then the version exists and that is success.
  parts.push('--skip-existing');
  const { registry, profile } = ctx.globals();
  if (registry) parts.push('--registry', shellWord(registry));
  if (profile) parts.push('--profile', shellWord(profile));
  if (options.publisher) parts.push('--publisher', shellWord(options.publisher));
  if (options.changelogFile && options.changelogFile !== '-')
    parts.push('--changelog-file', shellWord(options.changelogFile));
  if (options.changelog) parts.push('--changelog', shellWord(options.changelog));
  if (options.changelogFromGit) parts.push('--changelog-from-git');
  if (options.allowDirty) parts.push('--allow-dirty');
  // The archive is packed and scanned again: with the same limits and the same answer to its findings.
  if (options.maxSize) parts.push('--max-size', shellWord(options.maxSize));
  if (options.failOn && options.failOn !== DEFAULT_SCAN_FAIL_ON) parts.push('--fail-on', options.failOn);
  if (options.acceptFindings) parts.push('--accept-findings');
  if (options.trusted) parts.push('--trusted');
  return parts.join(' ');
}

/** The upload's progress bar on stderr, only where animations may show (a terminal, not CI, not --json). */
export function progressBar(ctx: Ctx): { update?: (sent: number, total: number) => void; end(): void } {
  if (!ctx.out.animated) return { end: () => {} };
  const line = ctx.out.progress();
  return {
    update: (sent, total) => {
      const percent = total ? Math.floor((sent / total) * 100) : 100;
      const width = 30;
      const filled = Math.round((percent / 100) * width);
      line.update(
        `uploading [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(percent).padStart(3)}%  ${formatSize(sent)} / ${formatSize(total)}`,
        sent >= total,
      );
    },
    end: line.end,
  };
}

export const ARCHIVE_HINT = `nothing was published: ${LIMITS_HINT}`;

/** Fails before anything is created when the archive breaks the registry's limits (GET /limits). */
export function checkLimits(
  client: Client,
  limits: RegistryLimits | undefined,
  archive: ArchiveResult,
  request: { nodeId: string; version: string },
): void {
  if (!limits) return; // a registry that does not say: the publish declares the archive, and it decides
  const problems = limitProblems(limits, {
    size: archive.size,
    unpackedSize: archive.unpackedSize,
    entries: archive.files,
  });
  if (problems.length === 0) return;
  throw new CliError(
    `the archive of ${request.nodeId} ${request.version} does not fit ${client.baseUrl}: ${problems.join('; ')}`,
    EXIT.invalid,
    'payload_too_large',
    ARCHIVE_HINT,
    413,
  );
}

/**
 * `promise` itself, to be awaited later: marked handled, so that a rejection before then is not reported
 * (and the process not stopped) as an unhandled rejection. The later await still sees the rejection.
 */
export function awaitedLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

/** Rejects with the signal's reason once it aborts, else settles as `promise` does. */
export function untilInterrupted<T>(signal: AbortSignal, promise: Promise<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    promise.then(resolve, reject);
  });
}

/** What a failure after the version exists leaves behind, and the commands that finish or withdraw it. */
export function leftBehind(request: { nodeId: string; version: string }, registry: string, resume: string) {
  const pending = `${request.nodeId} ${request.version} is registered on ${registry} without its archive (pending): nobody can install it yet`;
  const withdraw = `nodereg version withdraw ${request.nodeId} ${request.version}`;
  const finish = `finish it with \`${resume}\` (it gets a fresh upload URL and uploads again; the version number is not used up), or withdraw it with \`${withdraw}\``;
  return {
    /** `by`: the signal (SIGINT, SIGTERM), which gives the exit code. */
    interrupted(by: unknown, when: string, maybe = false): CliError {
      const what = maybe ? pending.replace(' is registered', ' may be registered') : pending;
      return new CliError(`interrupted ${when}: ${what}`, exitCodeForSignal(by), 'interrupted', finish);
    },
    unanswered(failure: CliError): CliError {
      return new CliError(
        `${failure.message}, with the publish request sent: ${pending.replace(' is registered', ' may be registered')}`,
        failure.exitCode,
        failure.code,
        finish,
      );
    },
    uploadInterrupted(by: unknown): CliError {
      // The whole body may have been sent: the registry may have the archive, with its answer not read yet.
      const what = `${request.nodeId} ${request.version} is registered on ${registry}; if its archive did not arrive whole, it is pending: nobody can install it yet`;
      return new CliError(`interrupted during the upload: ${what}`, exitCodeForSignal(by), 'interrupted', finish);
    },
    uploadFailed(failure: CliError): CliError {
      // Retried already; one more run mends what a retry could (network, 5xx, 408, 429, an expired URL); the rest needs a fix first.
      const transient =
        failure.status === undefined ||
        failure.status >= 500 ||
        failure.status === 408 ||
        failure.status === 429 ||
        failure.code === 'forbidden';
      const hint =
        failure.code === 'banned'
          ? `${failure.hint ?? 'a banned publisher or node takes no archive'}; the version stays pending`
          : failure.status === 409 // another upload holds the version: the registry says how long
            ? `${failure.hint ?? 'retry once the other upload has ended'}; then ${finish}`
            : transient
              ? finish
              : `fix what the message says, then ${finish}`;
      return new CliError(
        `uploading the archive of ${request.nodeId} ${request.version} failed: ${failure.message}. ${pending}`,
        failure.exitCode,
        failure.code,
        hint,
        failure.status,
      );
    },
  };
}
