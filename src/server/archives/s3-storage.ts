// Archives in an S3-compatible bucket (`serve --storage s3://bucket/prefix`), for instances that share
// nothing but the database and the bucket. Loaded only when selected, with the SDK it needs.
import { mkdtempSync, createReadStream, mkdirSync } from 'node:fs';
import { lstat, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import {
  S3Client,
  HeadBucketCommand,
  PutObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  DeleteObjectCommand,
  ListObjectsV2Command,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { S3_MAX_PUT } from './s3-limits.js';
import { idleBounded, S3_TIMEOUTS, type S3Timeouts, within } from './s3-deadlines.js';

export { S3_TIMEOUTS } from './s3-deadlines.js';
import { withoutUrlSecrets } from '../../shared/url.js';
import {
  ArchiveExistsError,
  checkKey,
  receiveToFile,
  StorageUnavailableError,
  type ArchiveStorage,
  type ByteRange,
  type OpenedArchive,
  type StoredObject,
} from './storage.js';

/** The object metadata (x-amz-meta-sha256) an archive's SHA-256 is stored in, to tell its bytes without reading them. */
const SHA256_METADATA = 'sha256';

export interface S3StorageOptions {
  bucket: string;
  /** Keys are stored under it ("" for the bucket's root). */
  prefix: string;
  /** AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY. */
  env: NodeJS.ProcessEnv;
  /** Where uploads are spooled while they are checked; a fresh dir under the system's temp dir by default. */
  spoolDir?: string;
  /** S3_TIMEOUTS by default, each one given replacing its default. */
  timeouts?: Partial<S3Timeouts>;
}

/** The S3 client for this environment: a custom endpoint (MinIO and the like) gets path-style addressing. */
export function s3ClientFromEnv(env: NodeJS.ProcessEnv, given: Partial<S3Timeouts> = {}): S3Client {
  // The SDK's default is to wait forever: a hung S3 server would hold every download and upload.
  const { connectionTimeout, socketTimeout } = { ...S3_TIMEOUTS, ...given };
  // On Node 20 the first client prints the SDK's multi-line notice that its 2027 releases need Node 22
  // (a line `--log json` cannot parse, and nothing an operator of this build can act on). The SDK's own
  // switch turns it off; an operator who sets the variable keeps their value.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
  return new S3Client({
    endpoint,
    forcePathStyle: endpoint !== undefined,
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    credentials:
      env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
        ? {
            accessKeyId: env.AWS_ACCESS_KEY_ID,
            secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
            sessionToken: env.AWS_SESSION_TOKEN || undefined,
          }
        : undefined, // the SDK's own chain (profiles, instance roles)
    // Checksums only where S3 requires them: many S3-compatible servers reject the SDK's default
    // trailing checksums on streamed bodies. The SHA-256 of every archive is checked by us anyway.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { connectionTimeout, socketTimeout },
    // Without a logger of its own the SDK writes a warning to the console when a streamed PUT fails
    // ("An error was encountered in a non-retryable streaming request."): serve's stderr carries serve's
    // lines only, and the error itself is thrown and logged there once.
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {} },
  });
}

/**
 * What to set when the S3 host does not resolve (ENOTFOUND, EAI_AGAIN): the endpoint variable that
 * named it, or, with none set, that the SDK went to AWS (an S3-compatible server needs its endpoint).
 * Undefined for any other error.
 */
export function unresolvedHostHint(error: unknown, env: NodeJS.ProcessEnv): string | undefined {
  const { code, hostname } = (error ?? {}) as { code?: unknown; hostname?: unknown };
  if (code !== 'ENOTFOUND' && code !== 'EAI_AGAIN') return undefined;
  const host = typeof hostname === 'string' ? hostname : 'its host';
  const endpoint = env.AWS_ENDPOINT_URL_S3
    ? 'AWS_ENDPOINT_URL_S3'
    : env.AWS_ENDPOINT_URL
      ? 'AWS_ENDPOINT_URL'
      : undefined;
  if (endpoint) {
    return `${host} is the host of ${endpoint} (${withoutUrlSecrets(env[endpoint]!)}) and it does not resolve: set ${endpoint} to your S3-compatible server's address, such as http://minio.internal:9000`;
  }
  const region = env.AWS_REGION ? 'AWS_REGION' : env.AWS_DEFAULT_REGION ? 'AWS_DEFAULT_REGION' : undefined;
  const from = region ? `${env[region]}, from ${region}` : 'us-east-1, the default: AWS_REGION is not set';
  return `no S3 endpoint is set (AWS_ENDPOINT_URL_S3), so the registry went to AWS at ${host} (region ${from}), which does not resolve from here: for MinIO or another S3-compatible server set AWS_ENDPOINT_URL_S3=http://host:port; for AWS check AWS_REGION, and this machine's DNS and network`;
}

/** The bucket could not be used; `hint` says what to set, when known. */
class BucketError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

/** Resolves when the bucket answers; rejects in the S3 server's words (no such bucket, access denied). */
export async function checkBucket(bucket: string, env: NodeJS.ProcessEnv): Promise<void> {
  const client = s3ClientFromEnv(env);
  try {
    await within(S3_TIMEOUTS.answerTimeout, `the HEAD of bucket ${bucket}`, (abortSignal) =>
      client.send(new HeadBucketCommand({ Bucket: bucket }), { abortSignal }),
    );
  } catch (error) {
    const status = (error as S3ServiceException).$metadata?.httpStatusCode;
    const why =
      status === 404
        ? 'no such bucket'
        : status === 403
          ? 'access denied (check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)'
          : status !== undefined && status >= 500
            ? `the S3 server answered HTTP ${status}` // a HEAD answer has no body: the SDK's message is "UnknownError"
            : (error as Error).message || (error as Error).name;
    throw new BucketError(`bucket ${bucket}: ${why}`, unresolvedHostHint(error, env));
  } finally {
    client.destroy();
  }
}

/** The bytes `start` to `end` (inclusive) of a stream of the whole object; what follows is not read. */
async function* bytesOf(body: Readable, { start, end }: ByteRange): AsyncGenerator<Buffer> {
  let at = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (at + chunk.length > start) yield chunk.subarray(Math.max(0, start - at), end + 1 - at);
    at += chunk.length;
    if (at > end) return;
  }
}

/** A 404 for the object; not NoSuchBucket, which is the registry's fault (503), not an archive missing. */
const missing = (error: unknown) =>
  error instanceof S3ServiceException &&
  error.name !== 'NoSuchBucket' &&
  (error.$metadata.httpStatusCode === 404 || error.name === 'NoSuchKey' || error.name === 'NotFound');

/** Each process spools uploads in a fresh dir of the system's temp dir named so. */
export const SPOOL_PREFIX = 'nodereg-spool-';

/** A scratch file nobody has written for this long is no upload's: uploads time out within the hour. */
export const STALE_SPOOL_MS = 24 * 60 * 60 * 1000;

/**
 * The scratch files of instances that ended without closing (SIGKILL, a crash): each process spools in
 * a fresh dir, so a killed one's dir was never swept, and kept a whole upload per request in flight.
 * Only files unwritten for STALE_SPOOL_MS go: another instance sharing the temp dir may be receiving.
 */
async function sweepStaleSpools(own: string): Promise<void> {
  for (const entry of await readdir(tmpdir())) {
    const dir = join(tmpdir(), entry);
    if (!entry.startsWith(SPOOL_PREFIX) || dir === own) continue;
    for (const name of await readdir(dir).catch(() => [])) {
      const stat = await lstat(join(dir, name)).catch(() => undefined);
      if (stat?.isFile() && Date.now() - stat.mtimeMs > STALE_SPOOL_MS) await rm(join(dir, name), { force: true });
    }
  }
}

/** The client and the bucket an archive storage writes to. */
interface BucketOf {
  client: S3Client;
  bucket: string;
  timeouts: S3Timeouts;
}

/** What a PUT takes after its key: the body (made again for a retry), its size, type, and whether it is written once. */
type PutRest = [
  body: () => Buffer | Readable,
  size: number,
  contentType: string,
  options?: { once?: boolean; sha256?: string },
];

/** The object's size and the SHA-256 we stored with it, or undefined when there is none. */
async function headObject({ client, bucket, timeouts }: BucketOf, Key: string) {
  const head = new HeadObjectCommand({ Bucket: bucket, Key });
  return within(timeouts.answerTimeout, `the HEAD of ${Key}`, (abortSignal) => client.send(head, { abortSignal })).then(
    (found) => ({ size: found.ContentLength, sha256: found.Metadata?.[SHA256_METADATA] }),
    (error: unknown) => (missing(error) ? undefined : Promise.reject(error)),
  );
}

/**
 * One PUT, then a HEAD for the size stored: a look-alike or a captive proxy may answer 200 and store
 * nothing. Not the ETag: it is the body's MD5 only without SSE-KMS or SSE-C, and not on every S3-compatible server.
 * With `once`, the PUT is conditional (If-None-Match: *) and checked first, for servers that ignore
 * the condition: false when an object was there. `sha256` is kept as the object's metadata and checked back.
 */
async function putObject(
  s3: BucketOf,
  key: string,
  Key: string,
  ...[body, size, contentType, { once = false, sha256 } = {}]: PutRest
): Promise<boolean> {
  const { client, bucket } = s3;
  if (once && (await headObject(s3, Key))) return false;
  try {
    await client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key,
        Body: body(),
        ContentLength: size,
        ContentType: contentType,
        IfNoneMatch: once ? '*' : undefined,
        Metadata: sha256 ? { [SHA256_METADATA]: sha256 } : undefined,
      }),
    );
  } catch (error) {
    // 412: another writer made it first; 409: one is making it now.
    const status = (error as S3ServiceException).$metadata?.httpStatusCode;
    if (once && (status === 412 || status === 409)) return false;
    throw error;
  }
  const stored = await headObject(s3, Key);
  if (stored?.size !== size) {
    throw new StorageUnavailableError(
      `the S3 server answered the PUT of ${Key} (${size} bytes) as stored, and stored ${stored === undefined ? 'nothing' : `${stored.size} bytes`}`,
    );
  }
  if (sha256 && stored.sha256 !== undefined && stored.sha256 !== sha256)
    throw new ArchiveExistsError(key, stored.sha256);
  return true;
}

/** An object's body and whole size, or a range of it; undefined when there is no such object. */
async function openObject(
  { client, timeouts }: BucketOf,
  object: { Bucket: string; Key: string },
  range: ByteRange | undefined,
): Promise<OpenedArchive | undefined> {
  try {
    const get = new GetObjectCommand({ ...object, Range: range ? `bytes=${range.start}-${range.end}` : undefined });
    const answer = await within(timeouts.answerTimeout, `the GET of ${object.Key}`, (abortSignal) =>
      client.send(get, { abortSignal }),
    );
    // With a range, the whole size is after the slash of Content-Range. A server may ignore the Range
    // (HTTP allows it): then the whole object comes, without Content-Range, and the range is cut from it.
    const ranged = range !== undefined && answer.ContentRange !== undefined;
    const size = ranged ? Number(/\/(\d+)$/.exec(answer.ContentRange!)?.[1]) : Number(answer.ContentLength);
    // The socket timeout was for S3's answer: from here a client that reads slowly pauses the body
    // (backpressure), and an idle limit would cut its download midway.
    (answer.Body as IncomingMessage).socket?.setTimeout(0);
    const body = idleBounded(answer.Body as Readable, timeouts.bodyIdleTimeout, object.Key);
    return { stream: range && !ranged ? Readable.from(bytesOf(body, range)) : body, size };
  } catch (error) {
    if (missing(error)) return undefined;
    throw error;
  }
}

/** Every object under `prefix` (a page of at most 1,000 per request), its key without the prefix. */
async function* listObjects({ client, bucket, timeouts }: BucketOf, prefix: string): AsyncGenerator<StoredObject> {
  const Prefix = prefix ? `${prefix}/` : undefined;
  let ContinuationToken: string | undefined;
  do {
    const list = new ListObjectsV2Command({ Bucket: bucket, Prefix, ContinuationToken });
    const page = await within(timeouts.answerTimeout, `the listing of bucket ${bucket}`, (abortSignal) =>
      client.send(list, { abortSignal }),
    );
    for (const object of page.Contents ?? []) {
      if (!object.Key) continue;
      const key = Prefix ? object.Key.slice(Prefix.length) : object.Key;
      yield { key, size: object.Size ?? 0, modified: object.LastModified ?? new Date(0) };
    }
    ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (ContinuationToken);
}

export function createS3ArchiveStorage(options: S3StorageOptions): ArchiveStorage {
  const timeouts = { ...S3_TIMEOUTS, ...options.timeouts };
  const client = s3ClientFromEnv(options.env, timeouts);
  const { bucket } = options;
  const objectKey = (key: string) => {
    checkKey(key);
    return options.prefix ? `${options.prefix}/${key}` : key;
  };
  // Scratch only: one dir per process, so that instances sharing a temp dir never sweep each other's.
  const spoolDir = options.spoolDir ?? mkdtempSync(join(tmpdir(), SPOOL_PREFIX));
  mkdirSync(spoolDir, { recursive: true });

  const s3 = { client, bucket, timeouts };
  const send = (what: string, run: (abortSignal: AbortSignal) => Promise<unknown>, ms = timeouts.answerTimeout) =>
    within(ms, what, run);
  const head = (Key: string) => headObject(s3, Key);
  const put = async (key: string, ...rest: PutRest) => putObject(s3, key, objectKey(key), ...rest);

  return {
    receive: (body, maxBytes, memory, signal) => receiveToFile(body, maxBytes, spoolDir, memory, signal),

    // One PUT stores the object whole or not at all: an upload cut midway leaves nothing in the bucket.
    // It never replaces what is there (DESIGN.md §16).
    async commit(received, key) {
      if (received.size > S3_MAX_PUT)
        throw new Error(`an archive of ${received.size} bytes is over the ${S3_MAX_PUT} bytes one S3 PUT takes`);
      const { sha256 } = received;
      const body = () => createReadStream(received.tempPath);
      if (!(await put(key, body, received.size, 'application/zip', { once: true, sha256 }))) {
        // Written once: the same bytes already there are this archive (a retry); others stay as they are.
        const existing = await head(objectKey(key));
        if (existing?.sha256 !== sha256) throw new ArchiveExistsError(key, existing?.sha256);
      }
      await rm(received.tempPath, { force: true });
    },

    writeOnce: (key, data, contentType) => put(key, () => data, data.length, contentType, { once: true }),

    where: (key) => `s3://${bucket}/${objectKey(key)}`,
    location: options.prefix ? `s3://${bucket}/${options.prefix}` : `s3://${bucket}`,

    async discard(received) {
      await rm(received.tempPath, { force: true });
    },

    async write(key, data, contentType) {
      await put(key, () => data, data.length, contentType);
    },

    async remove(key) {
      const Key = objectKey(key);
      await send(`the DELETE of ${Key}`, (abortSignal) =>
        client.send(new DeleteObjectCommand({ Bucket: bucket, Key }), { abortSignal }),
      );
    },

    async exists(key) {
      try {
        const Key = objectKey(key);
        await send(`the HEAD of ${Key}`, (abortSignal) =>
          client.send(new HeadObjectCommand({ Bucket: bucket, Key }), { abortSignal }),
        );
        return true;
      } catch (error) {
        if (missing(error)) return false;
        throw error;
      }
    },

    open: async (key, range) => openObject(s3, { Bucket: bucket, Key: objectKey(key) }, range),

    list: () => listObjects(s3, options.prefix),

    // Nothing temporary is ever in the bucket: only the spool dirs have leftovers of a crash.
    async sweep() {
      for (const name of await readdir(spoolDir)) await rm(join(spoolDir, name), { force: true, recursive: true });
      if (!options.spoolDir) await sweepStaleSpools(spoolDir);
    },

    async ready() {
      await send(
        `the HEAD of bucket ${bucket}`,
        (abortSignal) => client.send(new HeadBucketCommand({ Bucket: bucket }), { abortSignal }),
        timeouts.readyTimeout,
      );
    },

    async close() {
      client.destroy();
      if (!options.spoolDir) await rm(spoolDir, { recursive: true, force: true });
    },
  };
}
