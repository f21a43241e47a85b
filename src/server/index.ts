import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { createServer, IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { getRequestListener, RequestError, type HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Hono } from 'hono';
import { withoutUserInfo } from '../shared/url.js';
import { noRoute, tooManyPipelined } from '../contract/errors.js';
import { CLOSE_MAX_MS, CLOSE_STALLED_MS, DEFAULT_MAX_ARCHIVE, DEFAULT_MAX_UNPACKED, DEFAULT_PORT, PIPELINED_MAX } from '../shared/tuning.js';
import { rollBackArchiveClaims } from './archives/claims.js';
import { createLocalArchiveStorage, StorageUnavailableError, type ArchiveStorage } from './archives/storage.js';
import { MemoryBudget, UPLOAD_MEMORY } from './archives/validate-zip.js';
import { bootstrapAdmin, createAuthenticate, resolveAdminToken } from './accounts/admin.js';
import { prepareDataDir, refuseIncompleteBackup } from './data-dir.js';
import { createNodeAnswers } from './node-answers.js';
import { createVersionLists } from './version-lists.js';
import { accessLog as accessLogger } from './access-log.js';
import { HttpError, rawErrorResponse } from './errors.js';
import type { ProxyOptions } from './proxy/options.js';
import type { ServerContext } from './context.js';
import { DROP, type AppEnv } from './route.js';
import { routeModules } from './routes/index.js';
import { rateLimit } from './rate-limit.js';
import { loadKeys, type ServerKeys } from './secrets.js';
import { openDatabase, type Db } from './store/db.js';
import type { RegistryStore } from './store/registry-store.js';
import { createTaskStore, type TaskStore } from './proxy/store.js';
import { byteClock } from './byte-clock.js';
import { createSqliteRegistryStore } from './store/sqlite-registry-store.js';
import { createUploadScanner, type ScanLimits, type ScanMode } from './scan-upload.js';

export interface RegistryServerOptions {
  /**
   * Where the embedded defaults keep their files (database, archives, secret, admin token). Optional
   * only when `database` holds the secret, `archives` is given and `adminToken` is set: a stateless instance.
   */
  dataDir?: string;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** The URL clients reach this server at (download and upload URLs are built on it). Default: the listening URL. */
  publicUrl?: string;
  review?: 'auto' | 'manual';
  maxArchive?: number;
  maxUnpacked?: number;
  /** Mutating requests per minute per user (else per address); off when undefined. */
  rateLimit?: number;
  /** Server events and internal errors (stderr in `serve`); none when undefined. A level marks what went wrong. */
  log?: (line: string, level?: 'warn' | 'error') => void;
  /** One line per request (`serve --log`): by default to `log`; `false` for none. */
  accessLog?: ((line: string) => void) | false;
  version?: string;
  /** The admin's token (NODEREG_ADMIN_TOKEN); generated into DIR/admin-token on first start when unset. */
  adminToken?: string;
  /** How long a request's headers may take to arrive, in ms; then 408. Default 60 s. */
  headersTimeout?: number;
  /**
   * How long a whole request may take to arrive, body included, in ms; then 408. Default 1 hour: Node's
   * 5 minutes would cut a maximum-size archive on a slow link.
   */
  requestTimeout?: number;
  /**
   * How long close() may wait for requests in flight, in ms; then every connection left is cut. Default
   * CLOSE_MAX_MS (60 s): a client trickling bytes is never cut as stalled, and would hold the stop for up
   * to the request timeout.
   */
  closeTimeout?: number;
  /** While closing, a connection that moves no byte this long (ms) is cut. Default CLOSE_STALLED_MS (10 s). */
  closeStalled?: number;
  /** How long /readyz keeps the answer of its archive storage check (ms). Default READY_STORAGE_KEEP_MS (5 s). */
  readyStorageKeep?: number;
  /** The AI proxy: upstreams (forward mode) or the sandbox, callbacks. DESIGN.md §4. */
  proxy?: ProxyOptions;
  /**
   * The database, when not the embedded default (SQLite in DIR/registry.db): the registry's store and
   * the proxy's tasks, and how to close them (after the last request).
   */
  database?: { store: RegistryStore; tasks: TaskStore; close(): void | Promise<void>; /** The server's secret, when the database keeps it. */ secret?: Buffer; /** Other instances may use it at the same time. */ shared?: boolean };
  /** Where archives live, when not the embedded default (DIR/archives). */
  archives?: ArchiveStorage;
  /** The URLs `database` and `archives` were opened from: a 503's log line names the one out of reach (password masked). */
  backendUrls?: { database?: string; storage?: string };
  /**
   * The scan of uploaded archives (DESIGN.md §10): `flag` (default) makes a version with a high or
   * critical finding Flagged, `warn` only keeps the findings, `off` scans nothing.
   */
  scan?: ScanMode;
  /** How long a scan may take and how much heap its worker may use (defaults: 10 minutes, 512 MiB). */
  scanLimits?: ScanLimits;
  /**
   * Bytes uploads may hold in memory, all together (receive buffers, archives read whole, entries kept
   * for the scan); past it an upload takes small buffers and the file path. Default: the process's
   * UPLOAD_MEMORY (64 MiB), shared by every server in the process.
   */
  uploadMemory?: number;
}

export interface RegistryServer {
  app: Hono<AppEnv>;
  /** The embedded SQLite database; undefined when `database` was given. */
  db: Db | undefined;
  store: RegistryStore;
  archives: ArchiveStorage;
  keys: ServerKeys;
  /** The budget of the bytes uploads hold in memory (`uploadMemory`). */
  uploadMemory: MemoryBudget;
  /**
   * The admin token generated into DIR/admin-token on this start (first start without `adminToken`), once
   * listening: print it once. None when a shared database kept the admin token it had.
   */
  generatedAdminToken: string | undefined;
  /**
   * DIR/admin-token's token (generated or read), once listening, when this start made it the admin's
   * live token: a CLI profile may keep it. None when a shared database kept another, or `adminToken` was given.
   */
  liveFileAdminToken: string | undefined;
  options: Required<Pick<RegistryServerOptions, 'host' | 'port' | 'review' | 'maxArchive' | 'maxUnpacked'>> &
    RegistryServerOptions;
  /** Starts listening; resolves to the URL it listens on. */
  listen(): Promise<string>;
  /** The public URL (after listen when not set). */
  publicUrl(): string;
  /** Stops accepting, lets in-flight requests finish (within `closeTimeout`), closes the database. */
  close(): Promise<void>;
}

/**
 * True when the database or the archive storage cannot be reached for the moment: a refused, reset or
 * timed-out connection, a host name that does not resolve (a DNS outage), the PostgreSQL client's connection errors, PostgreSQL's connection exceptions
 * (SQLSTATE 08…), shutdown (57P01–57P03) and too many connections (53300), or an S3 error answer: a 5xx,
 * or a 4xx refusing our keys or the bucket (AccessDenied, NoSuchBucket), or a store that answered
 * otherwise than a store does (StorageUnavailableError), none of them the client's doing (a missing
 * object's 404 is handled where it is expected).
 */
function backendUnavailable(error: unknown): boolean {
  if (error instanceof StorageUnavailableError) return true;
  const { code, name, $metadata } = (error ?? {}) as { code?: unknown; name?: unknown; $metadata?: { httpStatusCode?: number } };
  if (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE|EAI_AGAIN|ENOTFOUND|CONNECT_TIMEOUT|CONNECTION_\w+|08\w{3}|57P0[123]|53300)$/.test(code)) return true;
  return name === 'TimeoutError' || ($metadata?.httpStatusCode ?? 0) >= 400;
}

/** Writes refused for the operator to fix, not bugs: the disk is full, or serve may not write there. */
const UNWRITABLE = [
  {
    codes: /^(ENOSPC|EDQUOT|SQLITE_FULL|53100)$/, // PostgreSQL's disk_full
    why: 'out of disk space',
    fix: 'free space there',
    message: 'the registry is out of disk space; nothing was stored. Retry once its operator has freed space',
  },
  {
    codes: /^(EACCES|EPERM|EROFS|SQLITE_READONLY\w*)$/,
    why: 'not allowed to write',
    fix: 'let the user serve runs as write there (its permissions, a read-only mount)',
    message: 'the registry may not write its data at the moment; nothing was stored. Retry once its operator has fixed it',
  },
];
const unwritable = (error: unknown) => UNWRITABLE.find((kind) => kind.codes.test(String((error as { code?: unknown } | undefined)?.code)));

/**
 * The answer to an error no layer expected: 503 when the process is out of descriptors (EMFILE, ENFILE),
 * the disk is full or may not be written, or the database or archive storage is out of reach, and the client may retry, else 500. Both are logged.
 */
function internalError(error: unknown, log: RegistryServerOptions['log'], urls: RegistryServerOptions['backendUrls'] = {}, dataDir?: string): HttpError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EMFILE' || code === 'ENFILE') {
    log?.(`out of file descriptors (${code}): answered 503`, 'warn');
    return new HttpError('unavailable', 'the server is out of resources for the moment; retry shortly', undefined, undefined, { 'Retry-After': '1' });
  }
  const refused = unwritable(error);
  if (refused) {
    const database = /^(SQLITE_|\d)/.test(String(code));
    const url = database ? urls.database : urls.storage;
    const where = (error as NodeJS.ErrnoException).path ?? (url ? withoutUserInfo(url) : dataDir && join(dataDir, database ? 'registry.db' : 'archives'));
    log?.(`${refused.why} (${code}) writing ${database ? 'the database' : 'archives'}${where ? ` ${where}` : ''}; ${refused.fix}: answered 503`, 'warn');
    // Longer than a client's request timeout: it shows this at once rather than retrying into it.
    return new HttpError('unavailable', refused.message, undefined, undefined, { 'Retry-After': '60' });
  }
  // A newer nodereg migrated the shared database under this one (a rolling upgrade): a statement prepared
  // on a connection no longer fits its table. postgres.js has dropped it, and re-prepares it on the retry;
  // it retries by itself outside a transaction only.
  if ((error as { routine?: unknown } | undefined)?.routine === 'RevalidateCachedQuery') {
    log?.(`the database's tables changed under a prepared statement (another nodereg migrated them): answered 503; the retry prepares it again`, 'warn');
    return new HttpError('unavailable', "the registry's database changed its tables a moment ago; retry", undefined, undefined, { 'Retry-After': '1' });
  }
  if (backendUnavailable(error)) {
    // The S3 client's errors (its answers and its network failures) carry $metadata; the database's do not.
    const storage = error instanceof StorageUnavailableError || (error as { $metadata?: unknown }).$metadata !== undefined;
    const url = storage ? urls.storage : urls.database;
    const which = `${storage ? 'archive storage' : 'database'}${url ? ` ${withoutUserInfo(url)}` : ''}`;
    const check = storage
      ? ((error as { fix?: string }).fix ?? 'check that the bucket exists, its endpoint answers and it takes the keys')
      : 'check that the database runs, is reachable and takes the credentials';
    log?.(`${which} unavailable (${(error as Error).message}); ${check}: answered 503`, 'warn');
    return new HttpError('unavailable', 'the registry cannot reach its database or archive storage at the moment; retry shortly', undefined, undefined, { 'Retry-After': '5' });
  }
  log?.(`internal error: ${error instanceof Error ? error.stack : String(error)}`, 'error');
  return new HttpError('internal', 'an internal error occurred; it has been logged');
}

/** Builds an unstarted registry server; `serve` and the tests share it. */
export function createRegistryServer(input: RegistryServerOptions): RegistryServer {
  const options = {
    host: '127.0.0.1',
    port: DEFAULT_PORT,
    review: 'auto' as const,
    maxArchive: DEFAULT_MAX_ARCHIVE,
    maxUnpacked: DEFAULT_MAX_UNPACKED,
    version: '0.0.0',
    ...input,
  };
  const dataDir = options.dataDir;
  if (dataDir === undefined && !(input.database?.secret && input.archives && options.adminToken)) {
    throw new Error('without a data dir, the server needs a database that keeps the secret, an archive storage and the admin token');
  }
  if (dataDir !== undefined) {
    prepareDataDir(dataDir);
    refuseIncompleteBackup(dataDir, !input.database);
  }
  // The secret before the database: a serve starting on the same new dir meanwhile never finds a
  // registry.db without its secret (which it refuses as a backup cut short).
  const keys = loadKeys(dataDir, input.database?.secret);
  // (dataDir is set whenever an embedded default is used)
  const db = input.database ? undefined : openDatabase(join(dataDir!, 'registry.db'), options.log);
  const database = input.database ?? { store: createSqliteRegistryStore(db!), tasks: createTaskStore(db!), close: () => db!.close() };
  const app = new Hono<AppEnv>();
  let listeningUrl = '';
  const publicUrl = () => (options.publicUrl ?? listeningUrl).replace(/\/+$/, '');

  const closers: (() => void | Promise<void>)[] = [];
  const { store, tasks } = database;
  const archives = input.archives ?? createLocalArchiveStorage(join(dataDir!, 'archives'));
  const admin = resolveAdminToken(dataDir, options.adminToken);
  // Requests wait for the admin's token to be in place (listen() waits too).
  let adminLive = true;
  const ready = Promise.all([
    bootstrapAdmin(store, admin, dataDir, Boolean(input.database?.shared), options.log).then((live) => void (adminLive = live)),
    archives.sweep(),
    rollBackArchiveClaims(store, archives, { shared: input.database?.shared }).then((count) => {
      if (count) options.log?.(`rolled back ${count} upload(s) cut short by a crash; they can be uploaded again`);
    }),
  ]);
  ready.catch(() => {});
  const storeAuthenticate = createAuthenticate(store);
  const authenticate = async (token: string) => {
    await ready;
    return storeAuthenticate(token);
  };
  const ctx: ServerContext = {
    tasks,
    store,
    archives,
    options,
    keys,
    authenticate,
    publicUrl,
    nodeAnswers: createNodeAnswers(store, publicUrl),
    versionLists: createVersionLists(publicUrl),
    log: options.log ?? (() => {}),
    onClose: (task) => closers.push(task),
    scanUpload: createUploadScanner(options.scan ?? 'flag', (line) => options.log?.(line), options.scanLimits),
    uploadMemory: options.uploadMemory === undefined ? UPLOAD_MEMORY : new MemoryBudget(options.uploadMemory),
  };
  closers.push(async () => {
    await ctx.scanUpload.close();
  });

  /** Requests past PIPELINED_MAX on their connection: the app answers them 503. */
  const overPipelined = new WeakSet<IncomingMessage>();
  const pipelinedRefusal = tooManyPipelined(PIPELINED_MAX);
  const pipelinedPastMost = new HttpError(pipelinedRefusal.code, pipelinedRefusal.message, undefined, undefined, {
    'Retry-After': String(pipelinedRefusal.retryAfter),
    Connection: 'close',
  });
  const accessLog = options.accessLog === undefined ? options.log : options.accessLog || undefined;
  if (accessLog) app.use(accessLogger(accessLog));
  // Requests past the pipelining cap reach the app marked: answered here, after the access log.
  app.use(async (c, next) => {
    const incoming = (c.env as HttpBindings | undefined)?.incoming;
    if (incoming && overPipelined.has(incoming)) throw pipelinedPastMost;
    return next();
  });

  // HEAD is answered by the GET route with its body dropped (hono): cancel that body, or a file
  // streamed by the route stays open (an archive, a sandbox result) and descriptors run out.
  app.use(async (c, next) => {
    if (c.req.method !== 'HEAD') return next(); // other requests need no second step here
    await next();
    await c.res.body?.cancel().catch(() => {});
  });
  if (options.rateLimit !== undefined) app.use(rateLimit(options.rateLimit, authenticate));
  for (const register of routeModules) register(app, ctx);

  app.notFound((c) => c.json(new HttpError('not_found', noRoute(c.req.method, new URL(c.req.url).pathname)).body(), 404));
  app.onError((error, c) => {
    const answer = error instanceof HttpError ? error : internalError(error, options.log, options.backendUrls, dataDir);
    const incoming = (c.env as HttpBindings | undefined)?.incoming;
    if (answer.headers?.Connection === 'close' && incoming instanceof IncomingMessage && !incoming.complete && !incoming.socket.destroyed) {
      closeAfter(incoming, answer);
      // This very Response: the adapter writes nothing for it. A new Response with its header is still
      // written (an empty answer that Node queues behind those pipelined before it, ahead of ours).
      c.set('sentStatus', answer.status);
      return RESPONSE_ALREADY_SENT;
    }
    for (const [name, value] of Object.entries(answer.headers ?? {})) c.header(name, value);
    return c.json(answer.body(), answer.status as 400);
  });

  const requestTimeout = options.requestTimeout ?? 60 * 60 * 1000;
  const headersTimeout = Math.min(options.headersTimeout ?? 60_000, requestTimeout);
  // A request the adapter cannot turn into a URL (a backslash in the path, a bad Host header) is a
  // RequestError before hono sees it: answered in our shape too, not with an empty 400.
  const listener = getRequestListener(app.fetch, {
    errorHandler: (error) => {
      if (error instanceof RequestError) return Response.json(new HttpError('invalid_request', `malformed request: ${error.message}`).body(), { status: 400 });
      const answer = internalError(error, options.log, options.backendUrls, dataDir);
      return Response.json(answer.body(), { status: answer.status, headers: answer.headers });
    },
  });
  // The responses begun on each connection and not yet finished: an error of Node's parser there (a
  // pipelined request, a timeout) must not write its answer into the middle of one.
  const responses = new WeakMap<Duplex, ServerResponse[]>();
  /** An answer written by the listener itself, in our shape; Node queues it behind those begun before it. */
  const answerWith = (res: ServerResponse, status: number, error: HttpError) => {
    const body = JSON.stringify(error.body());
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...error.headers });
    res.end(body);
  };
  // Node checks the timeouts every connectionsCheckingInterval (30 s by default): often enough for these.
  // A request without a Host header reaches the adapter, which refuses it in our shape (Node's own
  // refusal is an empty 400).
  const server = createServer(
    { requestTimeout, headersTimeout, connectionsCheckingInterval: Math.min(30_000, Math.max(50, headersTimeout / 4)), requireHostHeader: false },
    (req, res) => {
      let begun = responses.get(req.socket);
      if (!begun) responses.set(req.socket, (begun = []));
      while (begun[0]?.writableFinished) begun.shift(); // a connection's responses finish in order
      const before = begun.at(-1);
      begun.push(res);
      // Pipelined requests are served one at a time: Node hands over every request of a chunk at once,
      // and each answer would be held whole behind the one before it, for a client that reads none.
      if (begun.length > PIPELINED_MAX) {
        overPipelined.add(req);
        return void listener(req, res);
      }
      if (before) return void ended(before).then(() => void (req.socket.destroyed || listener(req, res)));
      void listener(req, res);
    },
  );
  // An Expect other than 100-continue: Node would answer an empty 417 itself. Answered in our shape,
  // with the status RFC 9110 gives it.
  const unsupportedExpect = new HttpError('invalid_request', 'unsupported Expect header: only "100-continue" is understood', undefined, undefined, { Connection: 'close' });
  server.on('checkExpectation', (_req, res) => answerWith(res, 417, unsupportedExpect));
  // Accepting a connection fails when descriptors run out (EMFILE): the connection is dropped, the
  // server goes on. Unheard, the error would end the process.
  server.on('error', (error: NodeJS.ErrnoException) => {
    if (server.listening) options.log?.(`cannot accept a connection: ${error.code ?? error.message}`);
  });
  // Errors of Node's HTTP parser (and its timeouts) never reach hono: answer them in our shape too,
  // unless an answer has begun on this socket (then only closing it is left).
  // Sockets answered by clientError or closeAfter whose client may still be sending: what arrives is dropped.
  const lingering = new WeakSet<Duplex>();
  /** Once `res` is written whole, or its connection closed. */
  const ended = (res: ServerResponse) => new Promise((resolve) => res.once('finish', resolve).once('close', resolve));
  /**
   * An answer that closes the connection (an upload refused before its body is read) while the client
   * still sends its body: written on the socket itself, then closed in stages (RFC 9112 §9.6): our side
   * first, then what still comes is read and dropped within DROP before the full close. Node's own
   * response would close at once, and a client still sending gets a reset before it reads the answer.
   * Answers to requests pipelined before this one go out whole first; until then the body is not read.
   */
  const closeAfter = (incoming: IncomingMessage, answer: HttpError) => {
    const socket = incoming.socket;
    lingering.add(socket);
    const begun = responses.get(socket) ?? [];
    const earlier = begun.slice(0, begun.findIndex((res) => res.req === incoming)).filter((res) => !res.writableFinished);
    if (earlier.length) {
      return void Promise.all(earlier.map(ended)).then(() => !socket.destroyed && closeAfter(incoming, answer));
    }
    socket.end(rawErrorResponse(answer.status, answer.code, answer.message, answer));
    incoming.resume(); // Node's parser drops the body
    const start = socket.bytesRead;
    const cut = () => socket.destroy();
    const timer = setTimeout(cut, DROP.ms);
    // Checked on every piece of the body as it arrives: a poll every 50 ms let a fast sender on loopback
    // push 150 MiB in between.
    incoming.on('data', () => socket.bytesRead - start > DROP.bytes && cut());
    socket.once('close', () => clearTimeout(timer));
  };
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (lingering.has(socket)) return; // the parser's error again, on bytes that arrive after the answer
    // An answer going out on the socket (it has one once those before it are done) is not cut into.
    const begun = responses.get(socket) ?? [];
    if (!socket.writable || begun.some((res) => res.headersSent && res.socket && !res.writableFinished)) return socket.destroy();
    lingering.add(socket);
    // The answers to the whole requests before the bad bytes go out first: some have not begun (a
    // route still at work), and the client would read the error as the answer to its first request.
    const pending = begun.filter((res) => res.req.complete && !res.writableFinished);
    void Promise.all(pending.map(ended)).then(() => refuseBytes(error, socket));
  });
  const refuseBytes = (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable) return socket.destroy();
    const timeout = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const [status, code, message] = timeout
      ? ([408, 'request_timeout', 'the request was sent too slowly'] as const)
      : tooLarge
        ? ([431, 'payload_too_large', 'the request headers are too large'] as const)
        : ([400, 'invalid_request', 'malformed HTTP request'] as const);
    socket.end(rawErrorResponse(status, code, message));
    // Refused before any route: the access log has its line too, without the method and path it never read.
    accessLog?.(`${message} (${error.code}): answered ${status}`);
    // The client may still be sending (headers over the limit, then a body). Closing with unread bytes
    // resets the connection, and a client still writing loses the answer: read and drop for as long as a refused body is (DROP).
    socket.resume();
    setTimeout(() => socket.destroy(), DROP.ms).unref();
  };

  // A client may close its side once it has sent its request (shutdown(SHUT_WR), HTTP/1.0 clients):
  // it still gets its answer. By default Node would end the socket at once and drop answers not yet
  // written.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;

  // Node closes a CONNECT request's connection without a word unless someone listens: no route here.
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => {});
    socket.end(rawErrorResponse(404, 'not_found', noRoute('CONNECT', request.url ?? '').slice(0, 300)));
  });

  // The open connections, for a stop that cuts the stalled ones (close()).
  const connections = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  /**
   * While closing: a connection that has moved no byte for `closeStalled` ms while its request (headers or
   * body) is still coming in, or while its answer waits for the client to read it, is cut. A stalled upload would hold
   * the stop for up to the request timeout (1 hour); one making progress finishes. An upload cut here
   * stored nothing (its claim and file come after the whole body), so it can be retried.
   */
  const stalledMs = options.closeStalled ?? CLOSE_STALLED_MS;
  const cutStalled = () => {
    const moved = byteClock<Socket>();
    return setInterval(() => {
      const now = performance.now();
      for (const socket of connections) {
        // No response begun: its request line or headers are still coming in (idle ones are closed by the sweep).
        const begun = responses.get(socket)?.filter((res) => !res.writableFinished) ?? [];
        const waiting = socket.writableLength > 0 || begun.length === 0 || begun.some((res) => !res.req.complete);
        if (moved.still(socket, now, !waiting) >= stalledMs) {
          options.log?.(`closing: cut a connection that moved nothing for ${stalledMs / 1000} s (a stalled request, upload or download)`);
          socket.destroy();
        }
      }
    }, 250);
  };

  return {
    app,
    db,
    store,
    archives,
    keys,
    uploadMemory: ctx.uploadMemory,
    get generatedAdminToken() {
      return admin.generated && adminLive ? admin.token : undefined;
    },
    get liveFileAdminToken() {
      return !admin.given && adminLive ? admin.token : undefined;
    },
    options,
    publicUrl,
    listen: async () => {
      await ready;
      return new Promise<string>((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port, options.host, () => {
          const { port } = server.address() as AddressInfo;
          const host = options.host.includes(':') ? `[${options.host}]` : options.host;
          listeningUrl = `http://${host}:${port}`;
          resolve(listeningUrl);
        });
      });
    },
    close: () =>
      new Promise((resolve) => {
        // A keep-alive connection busy when closing begins turns idle once its response is sent; close
        // it then, rather than after keepAliveTimeout (which held `serve` open seconds after SIGTERM).
        const sweep = setInterval(() => server.closeIdleConnections(), 50);
        const stalled = cutStalled();
        const closeTimeout = options.closeTimeout ?? CLOSE_MAX_MS;
        const deadline = setTimeout(() => {
          options.log?.(`closing: cut ${connections.size} connection(s) still open ${closeTimeout / 1000} s after the stop began`);
          for (const socket of connections) socket.destroy();
        }, closeTimeout);
        server.close(async () => {
          clearInterval(sweep);
          clearInterval(stalled);
          clearTimeout(deadline);
          for (const task of closers) await task();
          await database.close();
          await archives.close?.();
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
