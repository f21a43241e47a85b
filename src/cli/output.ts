import { styleText } from 'node:util';
import type { CliError } from './errors.js';
import { asInvoked, type TypedFlag } from './invocation.js';
import { withoutUrlSecrets } from '../shared/url.js';
import type { Stream, Streams } from './streams.js';

type Style = Parameters<typeof styleText>[0];

/** C1 controls (and DEL) and the bidi controls, which reorder what follows: a name could show as another. */
const C1_AND_BIDI = '\\x7f-\\x9f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';
/**
 * Text from a registry (a node's name or description, a reason) may hold control characters that
 * would drive the terminal: clear it, retitle it, colour or hide what follows, overwrite a line. They
 * are written escaped (`\x1b`), every escape sequence included; only line ends (`\n`, `\r\n`) pass.
 */
const CONTROL = new RegExp(`\\r(?!\\n)|[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f${C1_AND_BIDI}]`, 'g');
/**
 * Any control character at all: most text has none, and this test costs far less than the replace.
 */
const ANY_CONTROL = new RegExp(`[\\x00-\\x08\\x0b-\\x1f${C1_AND_BIDI}]`);
const escaped = (c: string) =>
  c.charCodeAt(0) > 0xff
    ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
    : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
/** For JSON.stringify: each string masked on its own, so that a mask never spans two strings of the document. */
const maskStrings = (_key: string, value: unknown) => (typeof value === 'string' ? withoutUrlSecrets(value) : value);
/** Whatever the CLI writes goes through here: no message, log or result prints a URL's user or password. */
const escapeControls = (text: string) => {
  const safe = withoutUrlSecrets(text);
  return ANY_CONTROL.test(safe) ? safe.replace(CONTROL, escaped) : safe;
};
/**
 * Our own styles travel as STYLE_MARK + `31m` until the text is written, so that they are told from
 * the same codes in a registry's text: the text is escaped first, then the marks become SGR codes. The
 * mark is a private-use character and a tag made at random for each run: no registry can send it.
 */
const STYLE_MARK = `\ue000${Math.random().toString(36).slice(2, 10)}[`;
const STYLE_MARKS = new RegExp(`${STYLE_MARK.replace('[', '\\[')}[\\d;]*m`, 'g');
/** Text as it may be written to a terminal: control characters escaped, then our styles (from `style`) made SGR codes. */
export const printable = (text: string) => {
  const safe = escapeControls(text);
  return safe.includes(STYLE_MARK) ? safe.replaceAll(STYLE_MARK, '\x1b[') : safe;
};
/** The width of text as `printable` writes it: escapes take their length, our styles none. */
const visibleWidth = (text: string) => {
  const safe = escapeControls(text);
  return [...(safe.includes(STYLE_MARK) ? safe.replace(STYLE_MARKS, '') : safe)].length;
};
/**
 * JSON for a terminal as well as a program: JSON.stringify escapes C0 controls but leaves C1 and bidi
 * controls raw; written as \uXXXX they are the same document.
 */
const RAW_IN_JSON = new RegExp(`[${C1_AND_BIDI}]`, 'g');
const jsonText = (value: unknown, indent?: number) => {
  const plain = JSON.stringify(value, null, indent);
  // Written again with each string masked only when the document holds a URL's user info: the replacer
  // makes a large document much slower to write, the test does not.
  const text = withoutUrlSecrets(plain) === plain ? plain : JSON.stringify(value, maskStrings, indent);
  RAW_IN_JSON.lastIndex = 0;
  return RAW_IN_JSON.test(text)
    ? text.replace(RAW_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    : text;
};

/**
 * stdout carries the result and nothing else; progress, hints and warnings go to stderr.
 * With --json, stdout holds exactly one JSON document.
 */
export class Output {
  constructor(
    /** Read on each write: a process's streams are made on first use (streams.ts). */
    private readonly streams: Streams,
    readonly json: boolean,
    private readonly env: NodeJS.ProcessEnv,
    /** How the user runs this CLI (`nodereg`, `npx nodereg`, `node bin/nodereg.js`): hints print commands that way. */
    readonly command = 'nodereg',
    /** The global flags the user typed (`--profile`, `--registry`): the commands hints print carry them too. */
    readonly flags: readonly TypedFlag[] = [],
  ) {}

  /** `text` with each command it names written as this user runs it (invocation.ts asInvoked). */
  invoked(text: string): string {
    return asInvoked(text, this.command, this.flags);
  }

  get stdout(): Stream {
    return this.streams.stdout;
  }

  get stderr(): Stream {
    return this.streams.stderr;
  }

  /**
   * Colours only when the stream is a terminal (or FORCE_COLOR says so) and NO_COLOR is unset. The
   * text is escaped first and the styles are marked, to become SGR codes as it is written (`printable`).
   */
  style(format: Style, text: string, stream: Stream = this.stdout): string {
    const env = this.env;
    if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return text;
    const forced = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
    if (!forced && !stream.isTTY) return text;
    return styleText(format, escapeControls(text), { validateStream: false }).replaceAll('\x1b[', STYLE_MARK);
  }

  /** The result of a command: `value` as JSON with --json, else the human text. */
  result(value: unknown, human?: string | (() => string)): void {
    if (this.json) {
      this.stdout.write(`${jsonText(value ?? null, 2)}\n`);
      return;
    }
    const text =
      typeof human === 'function'
        ? human()
        : (human ?? (typeof value === 'string' ? value : JSON.stringify(value, null, 2)));
    if (text !== '') this.stdout.write(printable(text.endsWith('\n') ? text : `${text}\n`));
  }

  /** Every line on stderr as one JSON object, `{time, level, message, …}` (`serve --log json`, for log shippers). */
  jsonLines = false;

  /** One JSON line, on stderr unless `stream` says otherwise (serve's URL line goes to stdout). */
  record(
    level: 'info' | 'warn' | 'hint' | 'error',
    fields: Record<string, unknown>,
    stream: Stream = this.stderr,
  ): void {
    stream.write(`${jsonText({ time: new Date().toISOString(), level, ...fields })}\n`);
  }

  info(text: string): void {
    if (this.jsonLines) return this.record('info', { message: this.invoked(text) });
    this.stderr.write(`${printable(this.invoked(text))}\n`);
  }

  success(text: string): void {
    if (this.jsonLines) return this.record('info', { message: text });
    this.stderr.write(`${printable(`${this.style('green', '✔', this.stderr)} ${text}`)}\n`);
  }

  warn(text: string): void {
    if (this.jsonLines) return this.record('warn', { message: text });
    this.stderr.write(`${printable(`${this.style('yellow', 'warning:', this.stderr)} ${text}`)}\n`);
  }

  hint(text: string): void {
    if (this.jsonLines) return this.record('hint', { message: this.invoked(text) });
    this.stderr.write(`${printable(`${this.style('dim', 'hint:', this.stderr)} ${this.invoked(text)}`)}\n`);
  }

  /** A line of --verbose on stderr, dimmed. */
  log(text: string): void {
    this.stderr.write(`${printable(this.style('dim', text, this.stderr))}\n`);
  }

  /** Whether progress animations may be shown: a terminal on stderr, and not in CI. */
  get animated(): boolean {
    return Boolean(this.stderr.isTTY) && !this.env.CI && !this.json;
  }

  /**
   * One line redrawn in place on stderr (a progress report), only where animations may show, at most
   * every 100 ms and not before `afterMs` (a quick task shows nothing); `end` finishes the line, so
   * what follows starts on a line of its own.
   */
  progress(afterMs = 0): { update(text: string, force?: boolean): void; end(): void } {
    let drawn = false;
    let last = Date.now() + afterMs - 100;
    return {
      update: (text, force = false) => {
        if (!this.animated || (!force && Date.now() - last < 100)) return;
        last = Date.now();
        drawn = true;
        this.stderr.write(`\r\x1b[2K  ${text}`);
      },
      end: () => {
        if (drawn) this.stderr.write('\n');
        drawn = false;
      },
    };
  }

  error(error: CliError, verbose: boolean): void {
    // With serve --log json an error is a log line on stderr only: stdout keeps the URL line alone.
    if (this.json && !this.jsonLines) {
      const body: Record<string, unknown> = { code: error.code, message: error.message, ...error.fields };
      if (error.hint) body.hint = this.invoked(error.hint);
      if (error.status) body.status = error.status;
      this.stdout.write(`${jsonText({ error: body })}\n`);
    }
    if (this.jsonLines) {
      const hint = error.hint && this.invoked(error.hint);
      return this.record('error', {
        message: this.invoked(error.message),
        code: error.code,
        hint,
        stack: verbose ? error.stack : undefined,
      });
    }
    this.stderr.write(`${printable(`${this.style('red', 'error:', this.stderr)} ${this.invoked(error.message)}`)}\n`);
    if (error.hint) this.hint(error.hint);
    if (verbose && error.stack) this.log(error.stack);
  }
}

/** A human table: columns padded to their widest cell (as written: escapes take their length, colour codes none). */
export function table(rows: string[][], header?: string[]): string {
  const all = header ? [header, ...rows] : rows;
  const width = (cell: string | undefined) => visibleWidth(cell ?? '');
  // reduce, not Math.max(...): a list of a million rows would overflow the stack as arguments
  const widths = all[0]?.map((_, i) => all.reduce((widest, row) => Math.max(widest, width(row[i])), 0)) ?? [];
  const pad = (cell: string, i: number) => cell + ' '.repeat(Math.max(0, widths[i] - width(cell)));
  const line = (row: string[]) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : pad(cell, i)))
      .join('  ')
      .trimEnd();
  return all.map(line).join('\n');
}

/** "3 minutes ago", "in 2 days", from an ISO date. */
export function relativeTime(iso: string | undefined | null, now = Date.now()): string {
  if (!iso) return '-';
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return iso;
  const seconds = Math.round((then - now) / 1000);
  const units: [string, number][] = [
    ['year', 31_536_000],
    ['month', 2_592_000],
    ['day', 86_400],
    ['hour', 3_600],
    ['minute', 60],
    ['second', 1],
  ];
  const [unit, size] = units.find(([, s]) => Math.abs(seconds) >= s) ?? ['second', 1];
  const count = Math.round(seconds / size);
  // Plain English rather than Intl.RelativeTimeFormat, whose locale data slows every command's start.
  if (count === 0) return 'now';
  if (unit === 'day' && Math.abs(count) === 1) return count < 0 ? 'yesterday' : 'tomorrow';
  const words = `${Math.abs(count)} ${unit}${Math.abs(count) === 1 ? '' : 's'}`;
  return count < 0 ? `${words} ago` : `in ${words}`;
}
