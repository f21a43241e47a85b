// Every number and enum of the wire rules, as plain data. No zod here: help text and option
// choices import this file without paying for the schema library.

export const DEFAULT_REGISTRY_URL = 'http://127.0.0.1:4880';
export const DEFAULT_PORT = 4880;
/** `serve` stopping: a connection that moves no byte for this long while its request comes in or its answer waits for the client is cut (docs/decisions.md). */
export const CLOSE_STALLED_MS = 10_000;
/** `/readyz` checks the archive storage at most this often (ms), so a flood of probes cannot hammer the bucket or the disk (docs/decisions.md). */
export const READY_STORAGE_KEEP_MS = 5_000;
/** `serve` stopping: how long the graceful stop may take in all; then every connection left is cut (docs/decisions.md). */
export const CLOSE_MAX_MS = 60_000;
/**
 * `restore`: how long PostgreSQL may leave one statement (a batch of rows, the commit, a migration)
 * unanswered before restore gives up, as serve gives a store call 5 s: a batch takes milliseconds, a
 * lock or a commit may take longer, and a frozen server would otherwise hold restore forever (docs/decisions.md).
 */
export const RESTORE_DEADLINE_MS = 30_000;

export const STAR = { min: 1, max: 5 } as const;

export const NODE_STATUS = ['NodeStatusActive', 'NodeStatusDeleted', 'NodeStatusBanned'] as const;
export const NODE_VERSION_STATUS = [
  'NodeVersionStatusActive',
  'NodeVersionStatusDeleted',
  'NodeVersionStatusBanned',
  'NodeVersionStatusPending',
  'NodeVersionStatusFlagged',
] as const;
export const PUBLISHER_STATUS = ['PublisherStatusActive', 'PublisherStatusBanned'] as const;
export const MEMBER_ROLES = ['owner', 'member'] as const;

/** Node ids: 1–100 characters, letters and digits at both ends, `._-` inside. */
export const NODE_ID = { maxLength: 100, pattern: '^[a-zA-Z0-9](?:[a-zA-Z0-9._-]*[a-zA-Z0-9])?$' } as const;
/** Node ids that would collide with a route of ours (`GET /nodes/search`); compared in any case. */
export const RESERVED_NODE_IDS = ['search'] as const;
/** The names Windows keeps for devices, with or without an extension: a node is installed into a folder named by its id. */
const WINDOWS_DEVICE = /^(?:con|prn|aux|nul|com[1-9]|lpt[1-9])(?:\.|$)/i;
export const isReservedNodeId = (id: string) => (RESERVED_NODE_IDS as readonly string[]).includes(id.toLowerCase()) || WINDOWS_DEVICE.test(id);
const NODE_ID_PATTERN = new RegExp(NODE_ID.pattern);
/** Whether the `nodeId` rule of resources.ts accepts `id` (which says why not), without loading zod. */
export const isNodeId = (id: string) => id.length <= NODE_ID.maxLength && NODE_ID_PATTERN.test(id) && !isReservedNodeId(id);
/** Publisher ids: lowercase, start with a letter, 2–64 characters. */
export const PUBLISHER_ID = {
  pattern: '^[a-z][a-z0-9-]{1,63}$',
  message: 'must be 2–64 characters: lowercase letters, digits or "-", starting with a letter',
} as const;
const PUBLISHER_ID_PATTERN = new RegExp(PUBLISHER_ID.pattern);
/** Whether the `publisherId` rule of resources.ts accepts `id` (PUBLISHER_ID.message says why not), without loading zod. */
export const isPublisherId = (id: string) => PUBLISHER_ID_PATTERN.test(id);
export const DESCRIPTION_MAX = 1000;
export const NAME_MAX = 200;
/**
 * Different words a search may hold: each costs the index a pass over every word it is the start of
 * (`t` repeated 100 times held the server 0.55 s over 8,000 nodes, against 20 ms for one).
 */
export const SEARCH_TERMS_MAX = 10;
/**
 * Live tokens a user may have of its own, and a publisher: every token is a row that its list answers
 * whole (20,000 made in 27 s answered 4.8 MB in ~200 ms of the server's event loop, and nothing stopped more).
 */
export const TOKENS_MAX = 100;
/**
 * The words of a search `q`, each matched as the start of a word: runs of letters and digits (anything
 * else separates them, as the index does), in lower case, without repeats, and without a word that
 * starts another one (every node the longer one matches, it matches).
 */
export function searchTerms(q: string): string[] {
  const words = [...new Set(q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])];
  return words.filter((word) => !words.some((other) => other !== word && other.startsWith(word)));
}
/** How an owner names a user to invite: an id, an e-mail (at most 254 characters) or a user name. */
export const USER_REF_MAX = 320;
export const VERSION_MAX = 256;
export const CHANGELOG_MAX = 100_000;
/** Every URL field (icon, banner_url, repository, website, callbacks…). */
export const URL_MAX = 2048;
/**
 * An image or video the AI proxy is given as an http(s) URL (it is kept and echoed as given): 8 KiB,
 * the request line most web servers accept, so no fetchable URL is refused.
 */
export const MEDIA_URL_MAX = 8192;
/** A version requirement such as `>=1.0.0 <2.0.0` (supported_appui_version…). */
export const VERSION_RANGE_MAX = 256;
/** Short free text that is no description: license, category, support, status detail. */
export const SHORT_TEXT_MAX = 1000;
/** Tags (and tags_admin): at most 64 items of 64 characters. */
export const TAGS = { maxItems: 64, maxLength: 64 } as const;
/** supported_os, supported_accelerators. */
export const PLATFORMS = { maxItems: 32, maxLength: 64 } as const;
/** A version's dependencies: pip requirement strings, which may hold a URL. */
export const DEPENDENCIES = { maxItems: 256, maxLength: URL_MAX } as const;
/** preempted_app_node_names. */
export const NODE_NAMES = { maxItems: 512, maxLength: NAME_MAX } as const;
/** `translations`: at most 64 languages (keys of 16 characters), all of it at most 64 KiB as JSON. */
export const TRANSLATIONS = { maxLanguages: 64, languageMaxLength: 16, maxJsonLength: 64 * 1024 } as const;
/** Tokens, user ids and other opaque identifiers sent in bodies. */
export const IDENTIFIER_MAX = 256;
/** Semantic version without build metadata; a leading `v` is accepted and dropped. */
export const SEMVER_PATTERN =
  '^v?(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)' +
  '(?:-((?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?$';

export const PAGE = { min: 1, defaultLimit: 20, limitMin: 1, limitMax: 100 } as const;
export const NODE_SORTS = ['created_at', 'downloads', 'rating', 'name', 'search_ranking'] as const;

export const TOKEN_PREFIX = { user: 'nrg_u_', pat: 'nrg_pat_' } as const;
/** How many leading characters of a token are shown in token lists. */
export const TOKEN_SHOWN_PREFIX = 12;

const MiB = 1024 * 1024;
/** The largest JSON body, that of the AI proxy's operations (base64 images must fit). */
export const JSON_BODY_MAX = 25 * MiB;
/**
 * The largest answer read from an AI provider (forward mode): room for one that echoes the largest
 * request. It is held to a request body's depth and values too (JSON_MAX_DEPTH, JSON_MAX_VALUES).
 */
export const UPSTREAM_ANSWER_MAX = JSON_BODY_MAX + 1 * MiB;
/**
 * The largest answer the CLI reads whole from a registry (every version of a node is the largest it
 * sends): past it the read stops, rather than a hostile server filling the publisher's memory.
 */
export const REGISTRY_ANSWER_MAX = 64 * MiB;
/**
 * The largest AI result the CLI downloads (`--output`): a provider's image or video is tens of MB; past
 * it the download stops, rather than an endless body filling the user's disk.
 */
export const AI_RESULT_MAX = 1024 * MiB;
/** Every other JSON body (publish, updates, accounts): a few KiB of metadata, so 1 MiB is plenty. */
export const METADATA_BODY_MAX = 1 * MiB;
/**
 * Bytes of request bodies read before their caller is known, in all (publish takes its credential in
 * the body, the incumbent's way): past it such a request is 503 for the moment.
 */
export const ANONYMOUS_BODIES_MAX = 64 * MiB;
/**
 * Bytes of JSON request bodies being read or held by their requests, in all (five of the largest): past
 * it a request is 503 for the moment, so that slow senders with a token, or AI submissions waiting on a
 * stalled provider, cannot hold memory without bound either.
 */
export const JSON_BODIES_MAX = 128 * MiB;
/** Arrays and objects nested deeper than this in a JSON body are 400 (a translations object is 2 or 3 deep). */
export const JSON_MAX_DEPTH = 64;
/**
 * Requests of one connection that may wait for their answer (HTTP/1.1 pipelining); the server answers
 * them one at a time, in order, and one that arrives past these is answered 503 and the connection closed.
 */
export const PIPELINED_MAX = 32;

/**
 * Values a JSON body may hold (array items, object members, arrays and objects), counted while it
 * arrives, before it is parsed: what parsing and validation may cost stays bounded whatever is sent.
 */
export const JSON_MAX_VALUES = 10_000;
/** Field problems reported in one answer (and by the CLI): enough to fix, small whatever comes in. */
export const MAX_FIELD_ERRORS = 20;
/** The longest `message` of an error answer (contract/errors.ts clipMessage). */
export const ERROR_MESSAGE_MAX = 1000;
export const DEFAULT_MAX_ARCHIVE = 200 * MiB;
export const DEFAULT_MAX_UNPACKED = 1024 * MiB;
/**
 * AI proxy sandbox: bytes of result files kept (until they expire, 24 h) per user and in all; a
 * submission that would pass either is 429 (`serve --sandbox-quota-user`, `--sandbox-quota-total`).
 */
export const DEFAULT_SANDBOX_QUOTA = { user: 32 * MiB, total: 512 * MiB } as const;
export const UPLOAD_URL_TTL_SECONDS = 15 * 60;
/** Entries one archive may hold: each name is kept in memory while the archive is checked. */
export const MAX_ARCHIVE_ENTRIES = 100_000;
export const CONTENT_SHA256_HEADER = 'X-Content-SHA256';

// ---- AI proxy ----

export const PERCENT = { min: 0, max: 100 } as const;

export const RELIGHT = {
  lightTransferStrength: { ...PERCENT, default: 100 },
  promptWeight: { min: 1, max: 1.4, maxDecimals: 2 },
  promptMax: 2000,
  styles: ['standard', 'darker_but_realistic', 'clean', 'smooth', 'brighter', 'contrasted_n_hdr', 'just_composition'],
  defaultStyle: 'standard',
  changeBackground: true,
  interpolateFromOriginal: false,
  preserveDetails: true,
} as const;

export const ADVANCED_SETTINGS = {
  levels: { ...PERCENT, default: 50 }, // whites, blacks, brightness, contrast, saturation
  engines: ['automatic', 'balanced', 'cool', 'real', 'illusio', 'fairy', 'colorful_anime', 'hard_transform', 'softy'],
  transferLightA: ['automatic', 'low', 'medium', 'normal', 'high', 'high_on_faces'],
  transferLightB: [
    'automatic', 'composition', 'straight', 'smooth_in', 'smooth_out', 'smooth_both', 'reverse_both',
    'soft_in', 'soft_out', 'soft_mid', 'strong_mid', 'style_shift', 'strong_shift',
  ],
  defaultChoice: 'automatic',
  fixedGeneration: false,
} as const;

export const SKIN_ENHANCER = {
  optimizedFor: ['enhance_skin', 'improve_lighting', 'enhance_everything', 'transform_to_real', 'no_make_up'],
  defaultOptimizedFor: 'enhance_skin',
  sharpen: { ...PERCENT, default: 0 },
  smartGrain: { ...PERCENT, default: 2 },
} as const;

export const VIDEO_EXTEND = {
  models: ['vidq2-pro', 'vidq2-turbo'],
  duration: { min: 1, max: 7, default: 5 },
  images: 1,
  promptMax: 2000,
  payloadMax: 1_048_576,
  resolutions: ['540p', '720p', '1080p'],
  defaultResolution: '720p',
} as const;

export const IMAGE_TASK_STATUS = ['CREATED', 'IN_PROGRESS', 'COMPLETED', 'FAILED'] as const;
export const VIDEO_TASK_STATE = ['created', 'processing', 'queueing', 'success', 'failed'] as const;
export const TASK_KINDS = ['relight', 'skin-enhancer', 'video'] as const;

/** Sandbox credits: base + perSecond × (duration − 1). */
export const VIDEO_CREDITS = {
  'vidq2-pro': { standard: { base: 30, perSecond: 10 }, '1080p': { base: 60, perSecond: 15 } },
  'vidq2-turbo': { standard: { base: 15, perSecond: 5 }, '1080p': { base: 40, perSecond: 10 } },
} as const;

export const CALLBACK_HEADERS = {
  event: 'X-Nodereg-Event',
  delivery: 'X-Nodereg-Delivery',
  signature: 'X-Nodereg-Signature',
} as const;
export const CALLBACK_EVENT = 'task.status_changed';

// ---- scan (DESIGN.md §10) ----

/** Severities of scan findings, least to most severe. */
export const SCAN_SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
/**
 * True when `severity` is `threshold` or more severe. Here, not beside the Finding schema, so that a scan
 * worker loads no zod.
 */
export const atLeast = (severity: (typeof SCAN_SEVERITIES)[number], threshold: (typeof SCAN_SEVERITIES)[number]) =>
  SCAN_SEVERITIES.indexOf(severity) >= SCAN_SEVERITIES.indexOf(threshold);
/** The rule ids of the scanner: fixed, documented in the README with examples. */
export const SCAN_RULE_IDS = [
  'dynamic-execution',
  'runtime-install',
  'obfuscation',
  'command-injection',
  'environment-manipulation',
  'network-at-import',
  'destructive-fs',
  'bytecode-manipulation',
  'unsafe-deserialization',
  'prohibited-string',
  'js-dynamic-execution',
  'js-remote-code',
  'persistence',
  'exfiltration',
  'code-in-data',
  'install-hook',
  'pth-file',
  'unsafe-requirement',
  'known-bad-pin',
  'not-fully-analysed',
] as const;
/** `nodereg scan --fail-on` and `publish`/`validate` stop at findings of this severity or above by default. */
export const DEFAULT_SCAN_FAIL_ON = 'high';
/** `serve --scan`: flag versions with high findings, only keep findings (warn), or do not scan (off). */
export const SCAN_MODES = ['flag', 'warn', 'off'] as const;
/** On the server, unsuppressed findings at or above this severity flag a version (and cannot be suppressed). */
export const SCAN_FLAG_AT = 'high';
/** Files larger than this are not parsed; they are listed as skipped. */
export const SCAN_MAX_FILE_BYTES = 4 * MiB;
/**
 * A file not parsed up to this size is still read for the names the rules look for (the text gate, a
 * few ms per MiB): one that names none has no findings; one that does flags the version for review on
 * the registry (and counts as a finding locally), as does a larger one (it is not read at all).
 */
export const SCAN_GATE_MAX_BYTES = 64 * MiB;
/**
 * A file's parse may run this long (wall time); past it the file is treated as one too large to parse.
 * Plain code parses at 2 MB/s or more (4 MiB: ~2 s at load 4 on the 2-core benchmark machine; wall time
 * grows with the load, so 10× that), garbage at 0.1–0.3 MB/s (4 MiB of random brackets: ~45 s), so an
 * archive of such files held a worker for minutes.
 */
export const SCAN_PARSE_MS = 20_000;
/**
 * The files of one scan (an upload's, or `nodereg scan`'s) are parsed until this long after it began;
 * the ones left are read for names only, as a file too large to parse. The 2,000-file bench tree,
 * every file parsed, takes ~5–10 s of CPU (24 s of wall time at load 8).
 */
export const SCAN_BUDGET_MS = 60_000;
/** A limit in time as the scan's messages give it: "1 ms", "30 s". */
export const seconds = (ms: number) => (ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`);
/** Why a file was not parsed (SkippedFile.reason; a Flagged version's status_reason quotes it). */
export const notParsed = {
  size: (size: number) => `${size} bytes, over the limit of ${SCAN_MAX_FILE_BYTES} bytes per file`,
  parse: (ms: number) => `its parse took longer than ${seconds(ms)}, the limit per file`,
  budget: (ms: number) => `the scan had run ${seconds(ms)}, its limit, before this file was parsed`,
};
/** "what dynamic-execution, command-injection look for" (the rules whose names a file not parsed holds). */
export const namesWhat = (rules: readonly string[]) => `what ${rules.join(', ')} ${rules.length > 1 ? 'look' : 'looks'} for`;
/** The registry's status_reason for a file not parsed that may hide a finding at SCAN_FLAG_AT (`rules` unknown: not read at all). */
/** Why a compiled Python file is not scanned (unscannedFlag's reason). */
export const COMPILED_PYTHON = 'compiled Python: Python may run it in place of its source, and no rule can read it';
export const unscannedFlag = (file: string, reason: string, rules?: readonly string[]) =>
  `scan: could not scan ${file} (${reason})${rules ? `, which names ${namesWhat(rules)}` : ''}; an admin must review it`.slice(0, 1000);
/** How long the registry's scan of an upload may run before the registry answers the upload anyway. */
export const SCAN_TIMEOUT_MS = 10 * 60_000;
/** How long a client waits for the answer to an upload after its last byte: the scan's time, and a minute to check and store. */
export const UPLOAD_ANSWER_TIMEOUT_MS = SCAN_TIMEOUT_MS + 60_000;
/** How long the client waits for the whole answer to one API request; one that takes longer fails (exit 1) and is not sent again. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** How long an upload's body may make no progress before the client gives up on that attempt. */
export const UPLOAD_IDLE_TIMEOUT_MS = 30_000;
/**
 * Uploads waiting for a scan worker (beyond those being scanned), at most; past it an upload is 503
 * `unavailable` with Retry-After (SCAN_QUEUE_RETRY_AFTER_S), before its body is read when the queue is
 * full already. A scan of a small node takes milliseconds; a full queue means the workers are swamped.
 */
export const SCAN_QUEUE_MAX = 64;
/**
 * Uploads of one publisher being scanned or waiting for it, at most; past it that publisher's upload is
 * answered as when the queue is full. The workers take the waiting publishers in turns, so one that
 * sends many uploads does not hold up the others' (or fill the queue with them).
 */
export const SCAN_QUEUE_PER_PUBLISHER = 8;
export const SCAN_QUEUE_RETRY_AFTER_S = 5;
/** At most this many findings are kept per version, the most severe first. */
export const SCAN_MAX_KEPT_FINDINGS = 200;
/**
 * The scan lists at most this many findings of one rule in one file, then stops looking for that rule
 * there: a file of 270,000 `eval(x)` lines cost 1.3 GB and 8 s in the CLI, and ran the registry's worker
 * out of memory. One finding already decides; the rest add nothing a reader can act on.
 */
export const SCAN_MAX_FINDINGS_PER_RULE = 100;
/** A scan report lists at most this many findings, the most severe first; it counts the others (`omitted`). */
export const SCAN_MAX_REPORTED_FINDINGS = 1000;
/**
 * How long the client keeps retrying an idempotent request (and an upload) while the registry looks
 * like it is restarting: a connection refused or reset, or 502, 503, 504 (a proxy in front of it).
 * A connection refused or reset before the registry has answered once in a run is not given this
 * time: it is more often a wrong URL than a restart.
 */
export const RESTART_WINDOW_MS = 15_000;
/**
 * The longest restart window a user may ask for (--retry-window, NODEREG_RETRY_WINDOW): a registry
 * being upgraded may take minutes, but a window of hours is more likely a slip that would hold a CI job.
 */
export const RETRY_WINDOW_MAX_MS = 3_600_000;
