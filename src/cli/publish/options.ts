import type { ScanSeverity } from '../../contract/scan.js';
import type { ChangelogFlags } from '../project.js';

/** The options of publish, as commands/publish.ts declares them. */
export interface PublishOptions extends ChangelogFlags {
  failOn: ScanSeverity;
  acceptFindings?: boolean;
  dryRun?: boolean;
  skipExisting?: boolean;
  publisher?: string;
  createPublisher?: boolean;
  maxSize?: string;
  /** Publish with the CI job's OIDC token, exchanged at the registry (trusted.ts). */
  trusted?: boolean;
  /** Publish files that differ from HEAD (dirty-tree.ts). */
  allowDirty?: boolean;
  /** The changelog: commit subjects since the previous version's tag (changelog-from-git.ts). */
  changelogFromGit?: boolean;
  /**
   * With several nodes: the dirs and --all as the command line gave them, so that a hint that repeats
   * the command (dirty-tree.ts) repeats all of it rather than naming one node. Not a flag.
   */
  commandNodes?: string[];
}
