// The sinks: calls, by the full name the resolution layer found for their callee, that run code or a
// shell, install packages, load code from data, write where code runs at every start, send data out or
// delete files. A sink whose decision rests on an argument that is a parameter of the function being
// walked is recorded in that function's summary instead, and decided at each call site.
import type { Node } from 'web-tree-sitter';
import type { Arguments } from './calls.js';
import type { Context, PythonModule, ResolvedFinding } from './python.js';
import { UNKNOWN, asText, commandText, constant, holdsParam, OWN, SITE, UNKNOWN_PART, type Value } from './value.js';

const EXEC = new Set(['builtins.exec', 'builtins.eval', 'builtins.compile']);
/** Take one string, run by a shell. */
const SHELL = new Set([
  'os.system',
  'os.popen',
  'subprocess.getoutput',
  'subprocess.getstatusoutput',
  'asyncio.create_subprocess_shell',
  'commands.getoutput',
]);
/** Take a program and its arguments. */
const PROCESS =
  /^(?:subprocess\.(?:run|call|check_call|check_output|Popen)|asyncio\.create_subprocess_exec|os\.(?:exec[lv]p?e?|spawn[lv]p?e?|posix_spawnp?)|pty\.spawn)$/;
const SHELLS = /^(?:(?:\/usr)?\/bin\/)?(?:sh|bash|zsh|dash|ksh|cmd(?:\.exe)?|powershell(?:\.exe)?|pwsh)$/;
const DOWNLOAD_TO_SHELL = /\b(?:curl|wget)\b[^|]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b/;
const INSTALLER = /(^|[\s/\\])(pip3?|uv|conda|mamba|micromamba)(\.exe)?(\s|$)/;
const INSTALL = /(^|\s)install(\s|$)/;
const DESERIALIZE = /^(?:pickle|cPickle|_pickle|dill|cloudpickle|joblib)\.(?:load|loads|Unpickler)$/;
const NETWORK =
  /^(?:(?:requests|httpx|urllib3|aiohttp)\.(?:get|post|put|patch|delete|head|options|request|stream|urlopen)|urllib\.request\.(?:urlopen|urlretrieve)|socket\.(?:create_connection|getaddrinfo|gethostbyname)|socket\.socket\(\)\.(?:connect|connect_ex|send|sendall|sendto)|http\.client\.HTTPS?Connection)$/;
const SEND = /\.(?:post|put|patch|request|send|sendall|sendto|urlopen)$/;
const LOADERS = new Set([
  'importlib.machinery.SourceFileLoader',
  'importlib.util.spec_from_file_location',
  'imp.load_source',
  'runpy.run_path',
]);
const REMOVE = new Set(['shutil.rmtree', 'os.remove', 'os.unlink', 'os.rmdir', 'os.removedirs']);
/** Where code runs at every login or start: shell startup files, startup folders, cron, systemd and desktop autostart. */
const PERSISTENT =
  /(?:^|\/)\.(?:bashrc|bash_profile|bash_login|zshrc|zprofile|zshenv|profile|config\/fish\/config\.fish)$|Start Menu\/Programs\/Startup|(?:^|\/)(?:cron\.d|crontabs?|anacrontab)(?:\/|$)|\/etc\/cron|\.config\/systemd\/user\/|\.config\/autostart\/|Library\/LaunchAgents\/|\/etc\/(?:profile\.d|rc\.local|init\.d)/i;
const CREDENTIAL =
  /(?:^|\/)\.ssh\/|\.aws\/credentials|(?:^|\/)\.netrc$|\.git-credentials|\.pypirc|\.docker\/config\.json|\.kube\/config|\.config\/gh\/hosts|Login Data|cookies\.sqlite|logins\.json|key[34]\.db/i;
const SETUP = new Set(['setuptools.setup', 'distutils.core.setup']);
/** Calls that put a path on the import path, or import from a zip, by the index of the path among their arguments. */
const IMPORT_PATH = new Map([
  ['sys.path.insert', 1],
  ['sys.path.append', 0],
  ['site.addsitedir', 0],
  ['zipimport.zipimporter', 0],
]);

/** A path as written in a message: the node's own directory as `<node>`. */
const shown = (text: string) =>
  text
    .replace(OWN, '<node>')
    .replace(SITE, '<site-packages>')
    .replace(new RegExp(UNKNOWN_PART, 'g'), '…')
    .replace(/\\/g, '/')
    .slice(0, 100);

/** Decides one call of a sink (`via`: the function summaries it was reached through, for the message). */
export function checkSink(
  module: PythonModule,
  path: string,
  given: Arguments,
  node: Node,
  ctx: Context,
  via?: string,
): void {
  // past the layer's bound its values are not known: the rules still read what follows
  if (module.result.incomplete) return;
  const { args, kw } = given;
  const report = (rule: ResolvedFinding['rule'], message: string) =>
    module.report(rule, node, via ? `${message} (${via})` : message);
  const first = args[0] ?? UNKNOWN;
  if (EXEC.has(path)) return executes(module, path, first, node, report);
  if (SHELL.has(path) || PROCESS.test(path)) {
    // what a parameter holds is decided at each call site: there only installs and downloads are news
    if (ctx.fn && args.some(holdsParam)) deferred(ctx, path, given, node);
    return runsProcess(path, given, report, Boolean(via));
  }
  if (path === 'runpy.run_module' && /^pip(?:\.|$)/.test(constant(first) ?? ''))
    return report(
      'runtime-install',
      `runpy.run_module("${constant(first)}") runs pip, to install packages at run time`,
    );
  if (/^pip\.(?:main|_internal\b)/.test(path))
    return report('runtime-install', `${path}() installs packages at run time`);
  if (DESERIALIZE.test(path)) return report('unsafe-deserialization', `${path}() can run code in the data it loads`);
  if (/^marshal\.loads?$/.test(path)) return report('bytecode-manipulation', `builds code from bytecode: ${path}()`);
  if (path === 'builtins.setattr' && constant(args[1]) === '__code__')
    return report('bytecode-manipulation', 'replaces a function\'s code: setattr(…, "__code__", …)');
  if (NETWORK.test(path)) return network(path, given, ctx, report);
  if (LOADERS.has(path))
    return loads(
      module,
      path,
      path === 'runpy.run_path' ? first : (args[1] ?? kw.get('path') ?? UNKNOWN),
      node,
      report,
    );
  if (IMPORT_PATH.has(path)) return importsZip(module, args[IMPORT_PATH.get(path)!] ?? kw.get('path') ?? UNKNOWN, node);
  if (SETUP.has(path) && kw.has('cmdclass'))
    return report('install-hook', 'setup() with cmdclass: its commands run code of the package when it is installed');
  if (REMOVE.has(path)) {
    const target = asText(first) ?? '';
    if (ctx.guarded || (target.startsWith(OWN) && !target.split('/').includes('..')))
      module.result.cleared.add(node.startIndex);
    return;
  }
  writes(path, given, ctx, report);
}

function deferred(ctx: Context, path: string, given: Arguments, node: Node): void {
  if (ctx.fn!.sinks.length < 16)
    ctx.fn!.sinks.push({
      path,
      args: given.args,
      kw: given.kw,
      at: `${path.replace(/^builtins\./, '')}() on line ${node.startPosition.row + 1}`,
    });
}

type Report = (rule: ResolvedFinding['rule'], message: string) => void;

function executes(module: PythonModule, path: string, first: Value, node: Node, report: Report): void {
  const name = path.slice('builtins.'.length);
  if (first.k === 'filetext') {
    loads(module, path, { k: 'str', v: first.path }, node, report);
    report('dynamic-execution', `${name}() of a file's text: ${shown(first.path)}`);
  } else if (constant(first) === undefined)
    report(
      'dynamic-execution',
      `${name}() of a value computed at run time, reached as ${node.childForFieldName('function')?.text.slice(0, 60)}`,
    );
}

function runsProcess(path: string, { args, kw }: Arguments, report: Report, viaSummary: boolean): void {
  const shell =
    SHELL.has(path) || (kw.get('shell')?.k === 'ref' && (kw.get('shell') as { path: string }).path === 'builtins.True');
  const flat: Value[] = args.flatMap((a) => (a.k === 'list' ? a.items : [a]));
  const text = flat.map((a) => asText(a) ?? UNKNOWN_PART).join(' ');
  const name = path.replace(/^builtins\./, '');
  if (INSTALLER.test(text) && INSTALL.test(text))
    report('runtime-install', `${name}() runs a package install: ${shown(text).slice(0, 80)}`);
  const program = constant(flat[path.startsWith('os.exec') || path.startsWith('os.spawn') ? 1 : 0]);
  const shellArgv = flat.some((a) => program && SHELLS.test(program) && /^(?:-c|\/c)$/i.test(constant(a) ?? ''));
  if ((shell || shellArgv) && text.includes(UNKNOWN_PART)) {
    if (!viaSummary) report('command-injection', `${name}() runs a shell command built at run time`);
  } else if (shell && DOWNLOAD_TO_SHELL.test(text))
    report('command-injection', `${name}() downloads a script and runs it in a shell: ${shown(text).slice(0, 80)}`);
  else if (shellArgv && DOWNLOAD_TO_SHELL.test(text))
    report('command-injection', `${name}() downloads a script and runs it in a shell`);
}

function network(path: string, { kw }: Arguments, ctx: Context, report: Report): void {
  if (ctx.importTime) report('network-at-import', `network call at import time: ${path}()`);
  if (ctx.flags.credential && (SEND.test(path) || kw.has('data') || kw.has('json') || kw.has('files')))
    report('exfiltration', `${path}() sends data out after reading a credential store`);
}

function loads(module: PythonModule, path: string, file: Value, node: Node, report: Report): void {
  const text = asText(file) ?? '';
  if (!text.startsWith(`${OWN}/`) || text.includes(UNKNOWN_PART) || /\.pyw?$/i.test(text)) return;
  const relative = text.slice(OWN.length + 1);
  module.result.loads.push({ path: relative, node });
  report(
    'code-in-data',
    `${path.replace(/^builtins\./, '')}() runs ${relative}, a shipped file that is not .py, as Python: the scan reads it as Python too`,
  );
}

/** A zip of the node's own put on the import path: the scan reads its Python members too (nested-zip.ts). */
function importsZip(module: PythonModule, file: Value, node: Node): void {
  const text = asText(file) ?? '';
  if (text.startsWith(`${OWN}/`) && !text.includes(UNKNOWN_PART) && /\.zip$/i.test(text))
    module.result.loads.push({ path: text.slice(OWN.length + 1), node });
}

const WRITE_MODE = /[wax+]/;

/** Writes and copies: where to, whether the target runs code at start; and reads of credential stores. */
function writes(path: string, { args, kw }: Arguments, ctx: Context, report: Report): void {
  let target: string | undefined;
  if (path === 'builtins.open' || path === 'io.open') {
    const mode = constant(args[1] ?? kw.get('mode')) ?? 'r';
    const file = asText(args[0] ?? UNKNOWN) ?? '';
    if (!WRITE_MODE.test(mode)) {
      if (CREDENTIAL.test(file)) ctx.flags.credential = true;
      return;
    }
    target = file;
  } else if (path === 'pathlib.Path.read_text') {
    if (CREDENTIAL.test(asText(args[0] ?? UNKNOWN) ?? '')) ctx.flags.credential = true;
    return;
  } else if (path === 'pathlib.Path.write_text') target = asText(args[0] ?? UNKNOWN);
  else if (/^(?:shutil\.(?:copy|copy2|copyfile|move)|os\.(?:rename|replace|symlink|link))$/.test(path))
    target = asText(args[1] ?? UNKNOWN);
  if (!target) return;
  const normal = target.replace(/\\/g, '/');
  if (PERSISTENT.test(normal) || (normal.startsWith(SITE) && /\.pth$/i.test(normal))) {
    report(
      'persistence',
      `writes ${shown(normal)}: code there runs at every ${normal.startsWith(SITE) ? 'start of Python' : 'login or start'}`,
    );
  }
}
