// What a CI job's OIDC token says about the job, read from each platform's claims (GitHub Actions,
// GitLab CI), and how it is held against a trust: every refusal names the claim that did not match.
import type { TrustRow } from '../store/trusts.js';

/** The job as provenance records it and trusts match it. */
export interface Job {
  issuer: string;
  repository: string;
  /** The workflow file's name (publish.yml). */
  workflow: string;
  /** The full workflow reference (owner/repo/.github/workflows/publish.yml@refs/tags/v1). */
  workflow_ref: string;
  ref: string;
  sha: string;
  run_id: string;
  environment?: string;
}

const str = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : '');

/** The job of a token's claims: GitHub's names, else GitLab's. */
export function jobOf(issuer: string, claims: Record<string, unknown>): Job {
  const gitlab = claims.project_path !== undefined && claims.repository === undefined;
  const workflowRef = str(gitlab ? claims.ci_config_ref_uri : claims.workflow_ref);
  const path = workflowRef.split('@')[0];
  return {
    issuer,
    repository: str(gitlab ? claims.project_path : claims.repository),
    workflow: path.slice(path.lastIndexOf('/') + 1),
    workflow_ref: workflowRef,
    ref: str(gitlab ? claims.ref_path : claims.ref),
    sha: str(claims.sha),
    run_id: str(gitlab ? claims.pipeline_id : claims.run_id),
    ...(str(claims.environment) ? { environment: str(claims.environment) } : {}),
  };
}

/** A ref pattern: `*` is any run of characters, the rest literal. */
const refMatches = (pattern: string, ref: string) =>
  new RegExp(
    `^${pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  ).test(ref);

/** The first claim of the job that the trust does not allow, with what each said; undefined when it allows it. */
export function mismatch(
  trust: TrustRow,
  issuerName: string,
  job: Job,
): { claim: string; message: string } | undefined {
  const say = (claim: string, got: string | undefined, want: string) => ({
    claim,
    message: `the token's ${claim} claim is ${JSON.stringify(got ?? null)}, the trust requires ${JSON.stringify(want)}`,
  });
  if (trust.issuer !== issuerName) return say('iss', issuerName, trust.issuer);
  if (trust.repository.toLowerCase() !== job.repository.toLowerCase())
    return say('repository', job.repository, trust.repository);
  const expectedPath = `${job.repository}/.github/workflows/${trust.workflow}`;
  const path = job.workflow_ref.split('@')[0];
  const workflowOk =
    job.workflow === trust.workflow && (issuerName === 'gitlab' || path.toLowerCase() === expectedPath.toLowerCase());
  if (!workflowOk) return say('workflow_ref', job.workflow_ref, `${expectedPath}@…`);
  if (trust.environment !== null && job.environment !== trust.environment)
    return say('environment', job.environment, trust.environment);
  if (trust.ref !== null && !refMatches(trust.ref, job.ref)) return say('ref', job.ref, trust.ref);
  return undefined;
}
