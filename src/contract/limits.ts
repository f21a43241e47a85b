// Every number and enum of the wire rules, as plain data. No zod here: help text and option
// choices import this file without paying for the schema library.

/** `/readyz` checks the archive storage at most this often (ms), so a flood of probes cannot hammer the bucket or the disk (docs/decisions.md). */
export const READY_STORAGE_KEEP_MS = 5_000;

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
/** What an admin decides of a flagged version. */
export const REVIEW_DECISIONS = ['approve', 'ban', 'ask-change'] as const;

/** Node ids: 1–100 characters, letters and digits at both ends, `._-` inside. */
export const NODE_ID = { maxLength: 100, pattern: '^[a-zA-Z0-9](?:[a-zA-Z0-9._-]*[a-zA-Z0-9])?$' } as const;
/** Node ids that would collide with a route of ours (`GET /nodes/search`); compared in any case. */
export const RESERVED_NODE_IDS = ['search'] as const;
/** The names Windows keeps for devices, with or without an extension: a node is installed into a folder named by its id. */
const WINDOWS_DEVICE = /^(?:con|prn|aux|nul|com[1-9]|lpt[1-9])(?:\.|$)/i;
export const isReservedNodeId = (id: string) =>
  (RESERVED_NODE_IDS as readonly string[]).includes(id.toLowerCase()) || WINDOWS_DEVICE.test(id);
const NODE_ID_PATTERN = new RegExp(NODE_ID.pattern);
/** Whether the `nodeId` rule of resources.ts accepts `id` (which says why not), without loading zod. */
export const isNodeId = (id: string) =>
  id.length <= NODE_ID.maxLength && NODE_ID_PATTERN.test(id) && !isReservedNodeId(id);
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
 * Different words a search may hold: each costs the index a pass over every word it is the start of,
 * so one search of many short words would hold the server many times as long as a search of one.
 */
export const SEARCH_TERMS_MAX = 10;
/**
 * Live tokens a user may have of its own, and a publisher: every token is a row that its list answers
 * whole, so tokens made without end would make that list megabytes that hold the server's event loop.
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
/** Every other JSON body (publish, updates, accounts): a few KiB of metadata, so 1 MiB is plenty. */
export const METADATA_BODY_MAX = 1 * MiB;
/** Arrays and objects nested deeper than this in a JSON body are 400 (a translations object is 2 or 3 deep). */
export const JSON_MAX_DEPTH = 64;

/**
 * Values a JSON body may hold (array items, object members, arrays and objects), counted while it
 * arrives, before it is parsed: what parsing and validation may cost stays bounded whatever is sent.
 */
export const JSON_MAX_VALUES = 10_000;
/** Field problems reported in one answer (and by the CLI): enough to fix, small whatever comes in. */
export const MAX_FIELD_ERRORS = 20;
/** The longest `message` of an error answer (contract/errors.ts clipMessage). */
export const ERROR_MESSAGE_MAX = 1000;
/**
 * Zip bombs within the size limits: an entry may expand to at most `entry` times its packed bytes, and
 * the archive to at most `total` times its size, each once past a floor that any honest small file or
 * archive stays under (source code packs 3–6 times, data files rarely past 50). Inflating costs CPU in
 * proportion to what comes out: without the bound a 1 MB upload expanded to the 1 GiB limit.
 */
export const UNPACKED_RATIO = { entry: 200, entryFloor: 8 * MiB, total: 50, totalFloor: 16 * MiB } as const;
/** The most an archive of `archiveBytes` may expand to: `maxUnpacked`, or less for a small archive (UNPACKED_RATIO). */
export const unpackedBound = (archiveBytes: number, maxUnpacked: number) =>
  Math.min(maxUnpacked, Math.max(UNPACKED_RATIO.totalFloor, UNPACKED_RATIO.total * archiveBytes));
/** Whether one entry packed to `packed` bytes may expand to `unpacked` (UNPACKED_RATIO). */
export const entryRatioAllowed = (packed: number, unpacked: number) =>
  unpacked <= Math.max(UNPACKED_RATIO.entryFloor, UNPACKED_RATIO.entry * packed);
/** Entries one archive may hold: each name is kept in memory while the archive is checked. */
export const MAX_ARCHIVE_ENTRIES = 100_000;

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
    'automatic',
    'composition',
    'straight',
    'smooth_in',
    'smooth_out',
    'smooth_both',
    'reverse_both',
    'soft_in',
    'soft_out',
    'soft_mid',
    'strong_mid',
    'style_shift',
    'strong_shift',
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
/** The rule ids of the scanner: fixed, documented in docs/scan.md with examples. */
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
/**
 * Uploads of one publisher being scanned or waiting for it, at most; past it that publisher's upload is
 * answered as when the queue is full. The workers take the waiting publishers in turns, so one that
 * sends many uploads does not hold up the others' (or fill the queue with them).
 */
export const SCAN_QUEUE_PER_PUBLISHER = 8;

/** The longest grace `admin gc` takes: a hundred years (a time further back is no date at all). */
export const GC_GRACE_MAX_SECONDS = 100 * 365 * 24 * 3600;

/** The media type of an in-toto statement in a DSSE envelope. */
export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';
export const IN_TOTO_STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
export const SLSA_PROVENANCE_TYPE = 'https://slsa.dev/provenance/v1';

/** The events a publisher's webhook may be sent. */
export const WEBHOOK_EVENTS = ['version.published', 'version.status_changed'] as const;
