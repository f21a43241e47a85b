// The provenance of a version published with an exchanged token: an in-toto v1 statement whose predicate
// is SLSA provenance v1, naming the archive by its SHA-256 and the job that built it, in a DSSE envelope
// signed with the registry's key (signing-key.ts).
import { IN_TOTO_PAYLOAD_TYPE, IN_TOTO_STATEMENT_TYPE, SLSA_PROVENANCE_TYPE } from '../../contract/limits.js';
import type { Job } from './claims.js';
import type { SigningKey } from './signing-key.js';

export const BUILD_TYPE = 'https://nodereg.dev/provenance/ci-publish/v1';

export interface Subject {
  publisherId: string;
  nodeId: string;
  version: string;
  sha256: string;
}

export function provenanceStatement(subject: Subject, job: Job, registry: string) {
  const { publisherId, nodeId, version, sha256 } = subject;
  return {
    _type: IN_TOTO_STATEMENT_TYPE,
    subject: [{ name: `${publisherId}/${nodeId}@${version}/node.zip`, digest: { sha256 } }],
    predicateType: SLSA_PROVENANCE_TYPE,
    predicate: {
      buildDefinition: {
        buildType: BUILD_TYPE,
        externalParameters: {
          workflow: { repository: job.repository, path: job.workflow, ref: job.ref, workflow_ref: job.workflow_ref },
          ...(job.environment ? { environment: job.environment } : {}),
        },
        internalParameters: { issuer: job.issuer, registry },
        resolvedDependencies: [{ uri: `git+${job.repository}@${job.ref}`, digest: { gitCommit: job.sha } }],
      },
      runDetails: {
        builder: { id: job.issuer },
        metadata: { invocationId: job.run_id },
      },
    },
  };
}

/** The signed envelope, as the version keeps it (JSON text). */
export function signedProvenance(key: SigningKey, subject: Subject, job: Job, registry: string): string {
  const statement = Buffer.from(JSON.stringify(provenanceStatement(subject, job, registry)), 'utf8');
  return JSON.stringify(key.envelope(IN_TOTO_PAYLOAD_TYPE, statement));
}
