import type { Client } from '../client/index.js';
import { DEFAULT_REGISTRY_URL, RESTART_WINDOW_MS, RETRY_WINDOW_MAX_MS } from '../shared/tuning.js';
import { isHttpUrl } from '../contract/url.js';
import { ConfigStore, DEFAULT_PROFILE, redactToken, sameRegistry } from './config.js';
import { parseDuration } from './duration.js';
import { shellWord, type TypedFlag } from './invocation.js';
import { withoutUrlSecrets } from '../shared/url.js';
import { durationText, retryWaits } from './retry-waits.js';
import { CliError, DEFAULT_WAIT_HINT, EXIT, invalidInput, ResultExit, toCliError } from './errors.js';
import { Output } from './output.js';
import { chooseStreams, type Stream, type Streams } from './streams.js';

export interface Globals {
  registry?: string;
  token?: string;
  profile?: string;
  /** --retry-window, as written. */
  retryWindow?: string;
  json?: boolean;
  input: boolean;
  verbose?: boolean;
}

/** Where requests go and with which token, and where each came from (flag > env > profile). */
export interface Connection {
  registry: string;
  token?: string;
  profile: string;
  tokenSource: 'flag' | 'env' | 'profile' | 'none';
  /** Whether the registry URL is the profile's (else a flag's, a variable's or the default). */
  registryFromProfile: boolean;
  /** Set when --profile or NODEREG_PROFILE names a profile the config does not have: the names it has. */
  unknownProfile?: string[];
  /** The registry the profile's token was saved for, when it is another than `registry` (so it is not sent). */
  tokenElsewhere?: string;
}

export interface RunDeps {
  env?: NodeJS.ProcessEnv;
  stdout?: Stream;
  stderr?: Stream;
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Forces the interactive decision (tests); by default: TTYs, no CI, no --no-input. */
  interactive?: boolean;
  /** How the user started the CLI, for the commands hints print (see invocation.ts); `nodereg` by default. */
  invocation?: string;
  /** Replaces @inquirer/prompts (tests). */
  prompts?: () => Promise<Prompts>;
}

export type Prompts = typeof import('@inquirer/prompts');

/**
 * A registry address written without its scheme (`127.0.0.1:4880/`, `registry.example.com`), as it
 * would be written whole: http:// for a registry of one's own (a loopback or private address,
 * localhost, or `nodereg serve`'s port 4880), https:// otherwise: a public host with a port
 * (`registry.example.com:8443`) most often speaks TLS, and plain http would send the token in the clear.
 */
export function withScheme(address: string): string | undefined {
  const host = /^(\[[\da-fA-F:.]+\]|[\w.-]+)(?::(\d+))?(?:\/\S*)?$/.exec(address);
  if (!host) return undefined;
  const url = `${ownHost(host[1].toLowerCase()) || host[2] === '4880' ? 'http' : 'https'}://${address}`;
  return isHttpUrl(url) ? url : undefined;
}

/** localhost, or a loopback, private, shared (100.64/10) or link-local IPv4 or IPv6 address. */
function ownHost(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host.startsWith('[')) return /^\[(::1|f[cd][\da-f]{2}:.*|fe[89ab][\da-f]:.*)\]$/.test(host);
  const ip = /^(\d+)\.(\d+)\.\d+\.\d+$/.exec(host);
  if (!ip) return false;
  const [a, b] = [Number(ip[1]), Number(ip[2])];
  return (
    a === 127 ||
    a === 10 ||
    a === 0 ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 169 && b === 254) ||
    (a === 100 && b >= 64 && b <= 127)
  );
}

/** What every command gets: streams, output, the connection, config, prompts. */
/** The login that saves a token where this run looks for it: its profile (and registry) named. */
export const loginCommand = (profile: string, registry?: string) =>
  `nodereg login${profile === DEFAULT_PROFILE ? '' : ` --profile ${shellWord(profile)}`}${registry ? ` --registry ${shellWord(registry)}` : ''}`;

export class Ctx {
  readonly env: NodeJS.ProcessEnv;
  private output?: Output;
  private configStore?: Promise<ConfigStore>;
  /** Where the token requests went with came from, with its profile and registry. */
  /** The retry window of the last client made, for the hint of a registry that could not be reached. */
  private windowUsed?: { ms: number; from?: string };
  private tokenUsed?: {
    source: Connection['tokenSource'];
    profile: string;
    registry: string;
    registryFromProfile: boolean;
  };

  constructor(
    /** The global options as commander parsed them. */
    private readonly readGlobals: () => Globals,
    readonly version: string,
    private readonly deps: RunDeps,
    /** The run's streams (`run` chooses them once for commander and the commands). */
    private readonly streams: Streams = chooseStreams(deps),
  ) {
    this.env = deps.env ?? process.env;
  }

  get stdout(): Stream {
    return this.streams.stdout;
  }

  get stderr(): Stream {
    return this.streams.stderr;
  }

  /** Taken when asked for: setting up process.stdin costs ~2 ms, which a read does not need. */
  get stdin(): NodeJS.ReadableStream & { isTTY?: boolean } {
    return this.deps.stdin ?? process.stdin;
  }

  globals(): Globals {
    return this.readGlobals();
  }

  /** Reports an error a command threw (stderr, and stdout with --json) and gives the exit code. */
  fail(error: unknown): number {
    if (error instanceof ResultExit) return error.exitCode;
    let cliError: CliError = toCliError(error);
    const used = this.tokenUsed;
    if (cliError.status === 401 && used?.source === 'profile') {
      // A profile keeps a token until it is replaced: an admin token serve saved there dies with its data dir or database.
      const login = loginCommand(used.profile);
      const hint = `profile "${used.profile}" holds this token and ${used.registry} refuses it: it is stale (an admin token \`nodereg serve\` saved there stops working when the registry's data dir or database changes); save a live one with \`${login}\``;
      cliError = new CliError(cliError.message, cliError.exitCode, cliError.code, hint, cliError.status);
    } else if (cliError.status === 401 && (used?.source === 'env' || used?.source === 'flag')) {
      // Say which token it was: one in the environment wins over a profile's, which a CI job may not expect.
      const from = used.source === 'env' ? 'NODEREG_TOKEN' : '--token';
      const hint = `${from} holds this token and ${used.registry} refuses it (revoked, or made on another registry); it is used before any profile's token: give a live one, or leave it out and save one with \`${loginCommand(used.profile)}\``;
      cliError = new CliError(cliError.message, cliError.exitCode, cliError.code, hint, cliError.status);
    } else if (
      cliError.code === 'network' &&
      /^cannot reach \S+: ECONNREFUSED\b/.test(cliError.message) &&
      used?.registryFromProfile
    ) {
      // A profile keeps its registry too: the port of a `nodereg serve` that stopped (an older one saved even a --port 0's).
      const profile = used.profile === DEFAULT_PROFILE ? '' : ` --profile ${shellWord(used.profile)}`;
      const hint = `nothing listens at ${used.registry}, the registry of profile "${used.profile}" (a \`nodereg serve\` that stopped, or serves on another port now): start it there, pass --registry with the URL it serves on now, or save that URL in the profile (nodereg${profile} config set registry, then the URL)`;
      cliError = new CliError(cliError.message, cliError.exitCode, cliError.code, hint, cliError.status);
    }
    if (cliError.code === 'network' && cliError.hint?.endsWith(DEFAULT_WAIT_HINT) && this.windowUsed) {
      // The hint names the window that was used: "waits longer" is no advice to one who set it.
      const used = this.windowUsed;
      const tail = used.from
        ? `it was waited for within the retry window you set (${used.from}); a longer one waits longer`
        : `the default retry window is ${durationText(used.ms)}: --retry-window 5m waits longer for one that is starting`;
      const hint = `${cliError.hint.slice(0, -DEFAULT_WAIT_HINT.length)}${tail}`;
      cliError = new CliError(cliError.message, cliError.exitCode, cliError.code, hint, cliError.status);
    }
    this.out.error(cliError, Boolean(this.globals().verbose));
    return cliError.exitCode;
  }

  get out(): Output {
    if (this.output) return this.output;
    const globals = this.globals();
    const flags: TypedFlag[] = globals.profile ? [['--profile', globals.profile]] : [];
    // a URL with a password is never printed: the hints then name no registry, rather than leak it
    if (globals.registry && withoutUrlSecrets(globals.registry) === globals.registry)
      flags.push(['--registry', globals.registry]);
    this.output = new Output(this.streams, Boolean(globals.json), this.env, this.deps.invocation, flags);
    return this.output;
  }

  /** Prompts are allowed only with TTYs on stdin and stdout, CI unset and no --no-input. */
  interactive(): boolean {
    if (this.globals().input === false) return false;
    if (this.deps.interactive !== undefined) return this.deps.interactive;
    return Boolean(this.stdin.isTTY && this.stdout.isTTY) && !this.env.CI;
  }

  async prompts(): Promise<Prompts> {
    return this.deps.prompts ? this.deps.prompts() : import('@inquirer/prompts');
  }

  config(): Promise<ConfigStore> {
    this.configStore ??= ConfigStore.open(this.env);
    return this.configStore;
  }

  /** flag > env > profile; the profile's token is used only for the registry it was saved for. */
  async connection(): Promise<Connection> {
    const g = this.globals();
    // A CI variable that is not defined arrives empty: unset. A pasted value's line break is dropped, as for the token.
    const variable = (name: string) => this.env[name]?.trim() || undefined;
    const profileName = g.profile ?? variable('NODEREG_PROFILE') ?? DEFAULT_PROFILE;
    let registry = g.registry?.trim() ?? variable('NODEREG_REGISTRY');
    // A token pasted into a CI secret often ends with a line break, which no header may carry (login trims it too).
    let token = (g.token ?? this.env.NODEREG_TOKEN)?.trim();
    let tokenSource: Connection['tokenSource'] = g.token ? 'flag' : this.env.NODEREG_TOKEN ? 'env' : 'none';
    const explicitProfile = g.profile !== undefined || variable('NODEREG_PROFILE') !== undefined;
    let unknownProfile: string[] | undefined;
    let tokenElsewhere: string | undefined;
    let registrySource = g.registry !== undefined ? '--registry' : 'NODEREG_REGISTRY';
    let registryFromProfile = false;
    // conf costs start-up time: read it only when something is still missing
    if (!registry || !token || explicitProfile) {
      const config = await this.config();
      const profile = config.profile(profileName);
      if (explicitProfile && !(profileName in config.profiles())) unknownProfile = Object.keys(config.profiles());
      if (!registry && profile.registry) {
        registrySource = `the registry of profile ${profileName}`;
        registryFromProfile = true;
      }
      registry ??= profile.registry;
      if (
        !token &&
        profile.token &&
        sameRegistry(profile.registry ?? DEFAULT_REGISTRY_URL, registry ?? DEFAULT_REGISTRY_URL)
      ) {
        token = profile.token;
        tokenSource = 'profile';
      } else if (!token && profile.token) {
        tokenElsewhere = profile.registry ?? DEFAULT_REGISTRY_URL;
      }
    }
    if (registry !== undefined && !isHttpUrl(registry)) {
      throw invalidInput(
        `${registrySource} "${registry}" is not an http:// or https:// URL`,
        `write it whole, such as ${withScheme(registry) ?? DEFAULT_REGISTRY_URL}`,
      );
    }
    return {
      registry: (registry ?? DEFAULT_REGISTRY_URL).replace(/\/+$/, ''),
      token,
      profile: profileName,
      tokenSource,
      registryFromProfile,
      unknownProfile,
      tokenElsewhere,
    };
  }

  /**
   * How long a registry that is restarting is waited for: --retry-window, else NODEREG_RETRY_WINDOW
   * (`chosen`, either of them), else RESTART_WINDOW_MS. A bad value is exit 2 naming the flag or variable.
   */
  retryWindow(): { ms: number; chosen: boolean; from?: string } {
    const flag = this.globals().retryWindow;
    const [value, name] =
      flag !== undefined
        ? [flag, '--retry-window']
        : [this.env.NODEREG_RETRY_WINDOW?.trim() || undefined, 'NODEREG_RETRY_WINDOW'];
    if (value === undefined) return { ms: RESTART_WINDOW_MS, chosen: false };
    const ms = parseDuration(value, name);
    if (ms > RETRY_WINDOW_MAX_MS)
      throw invalidInput(
        `${name} "${value}" is longer than ${RETRY_WINDOW_MAX_MS / 3_600_000}h, the most it may be`,
        `write a shorter one, such as 5m`,
      );
    return { ms, chosen: true, from: `${name} ${value}` };
  }

  /**
   * A client for the resolved registry. With `requireToken`, a missing token fails before any request.
   * `token` replaces the resolved one (login checks a token before saving it). `restartWindowMs`
   * replaces the user's retry window, for a command that must not wait (validate).
   */
  async client(
    options: {
      requireToken?: boolean;
      token?: string;
      timeoutMs?: number;
      retries?: number;
      restartWindowMs?: number;
    } = {},
  ): Promise<Client> {
    const window = this.retryWindow();
    // A command's own window (validate's none) leaves the hint as it is.
    this.windowUsed = options.restartWindowMs === undefined ? window : undefined;
    const connection = await this.connection();
    if (options.token !== undefined) connection.token = options.token;
    else
      this.tokenUsed = {
        source: connection.tokenSource,
        profile: connection.profile,
        registry: connection.registry,
        registryFromProfile: connection.registryFromProfile,
      };
    if (options.requireToken && !connection.token && connection.unknownProfile) {
      const known = connection.unknownProfile.length
        ? ` (profiles: ${connection.unknownProfile.join(', ')})`
        : ' (none is saved yet)';
      throw invalidInput(
        `there is no profile named "${connection.profile}"${known}`,
        `save one with \`nodereg login --profile ${shellWord(connection.profile)}\``,
      );
    }
    const odd = connection.token && /[^\x21-\x7e]|["'`]/.exec(connection.token)?.[0];
    if (odd) {
      // No header carries a line break or a control character, and no token holds a space or a quote: say so, naming where it came from, rather than send it.
      const from =
        options.token !== undefined
          ? 'the token given'
          : connection.tokenSource === 'flag'
            ? '--token'
            : connection.tokenSource === 'env'
              ? 'NODEREG_TOKEN'
              : `profile "${connection.profile}"`;
      const what =
        odd === '\n' || odd === '\r'
          ? 'a line break'
          : odd === ' ' || odd === '\t'
            ? 'a space'
            : odd < ' ' || odd === '\x7f'
              ? 'a control character'
              : odd < '\x7f'
                ? `a quote (${odd}), as pasted with the quotes around it`
                : 'a character outside ASCII';
      throw new CliError(
        `${from} is not a token: it holds ${what}`,
        EXIT.auth,
        'unauthorized',
        'a token is one word (nrg_pat_… or nrg_u_…): store it alone, without quotes, "Bearer " or anything before or after it',
      );
    }
    if (options.requireToken && !connection.token) {
      // A profile's token goes only to the registry it was saved for: `localhost` is another than `127.0.0.1` there.
      const elsewhere = connection.tokenElsewhere
        ? `profile "${connection.profile}" holds a token for ${connection.tokenElsewhere}, which is only sent there: use that URL, or `
        : '';
      throw new CliError(
        `no token for ${connection.registry}`,
        EXIT.auth,
        'unauthorized',
        `${elsewhere}set NODEREG_TOKEN=<token>, pass --token <token>, or run \`${loginCommand(connection.profile, connection.tokenElsewhere ? connection.registry : undefined)}\``,
      );
    }
    const { createClient } = await import('../client/index.js');
    const verbose = this.globals().verbose;
    return createClient({
      baseUrl: connection.registry,
      token: connection.token,
      userAgent: `nodereg/${this.version}`,
      timeoutMs: options.timeoutMs,
      retries: options.retries,
      restartWindowMs: options.restartWindowMs ?? window.ms,
      windowChosen: options.restartWindowMs === undefined && window.chosen,
      log: verbose ? (line) => this.out.log(line) : undefined,
      waits: retryWaits(this.out),
    });
  }

  /** All of stdin as text; empty when stdin is a terminal (nothing was piped). */
  async readStdin(): Promise<string> {
    if (this.stdin.isTTY) return '';
    let text = '';
    for await (const chunk of this.stdin) text += chunk.toString();
    return text;
  }

  /** For --verbose: which registry and token are in use, the token redacted. */
  describeConnection(connection: Connection): string {
    return `registry ${connection.registry} (profile ${connection.profile}), token ${redactToken(connection.token)} from ${connection.tokenSource}`;
  }
}
