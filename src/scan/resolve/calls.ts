// Calls, as the resolution layer reads them: the callee resolved (a module member by its full name, a
// lambda, a function of the module, operator.methodcaller/attrgetter), then handed to the sinks; and
// what the call gives back where that is known without running it (folded strings, imported modules,
// namespaces, paths).
import type { Node } from 'web-tree-sitter';
import { checkSink } from './sinks.js';
import { member, named } from './members.js';
import type { Context, PythonModule } from './python.js';
import {
  UNKNOWN,
  asText,
  constant,
  decodeLiteral,
  format,
  joinPath,
  ref,
  rot13,
  str,
  substitute,
  OWN,
  SITE,
  UNKNOWN_PART,
  type Value,
} from './value.js';

type Scope = Map<string, Value>;
/** A generator over more items than this is not unrolled. */
const MAX_UNROLLED = 256;

export interface Arguments {
  args: Value[];
  kw: Map<string, Value>;
}

export function callValue(module: PythonModule, node: Node, scopes: Scope[], ctx: Context, depth: number): Value {
  const callee = module.expr(node.childForFieldName('function')!, scopes, ctx, depth);
  const given = argumentsOf(module, node.childForFieldName('arguments'), scopes, ctx, depth);
  return apply(module, callee, given, node, scopes, ctx, depth);
}

function argumentsOf(module: PythonModule, list: Node | null, scopes: Scope[], ctx: Context, depth: number): Arguments {
  const out: Arguments = { args: [], kw: new Map() };
  if (!list) return out;
  if (list.type === 'generator_expression') return { args: [unrolled(module, list, scopes, ctx, depth)], kw: out.kw };
  for (const child of named(list)) {
    if (child.type === 'keyword_argument')
      out.kw.set(
        child.childForFieldName('name')!.text,
        module.expr(child.childForFieldName('value')!, scopes, ctx, depth),
      );
    else if (child.type === 'list_splat') {
      const value = module.expr(child.namedChildren[0]!, scopes, ctx, depth);
      if (value.k === 'list') out.args.push(...value.items);
      else out.args.push(UNKNOWN);
    } else if (child.type === 'dictionary_splat') module.expr(child.namedChildren[0]!, scopes, ctx, depth);
    else out.args.push(module.expr(child, scopes, ctx, depth));
  }
  return out;
}

/** `f(x) for x in [..]` over a known list: each item's value (`chr(c) for c in [101, 120]`). */
function unrolled(module: PythonModule, node: Node, scopes: Scope[], ctx: Context, depth: number): Value {
  const body = node.childForFieldName('body');
  const clause = node.namedChildren.find((c) => c?.type === 'for_in_clause');
  const variable = clause?.childForFieldName('left');
  const source = clause?.childForFieldName('right')
    ? module.expr(clause.childForFieldName('right')!, scopes, ctx, depth)
    : UNKNOWN;
  if (!body || variable?.type !== 'identifier' || source.k !== 'list' || source.items.length > MAX_UNROLLED) {
    if (body) module.expr(body, scopes, ctx, depth);
    return UNKNOWN;
  }
  return {
    k: 'list',
    items: source.items.map((item) => module.expr(body, [...scopes, new Map([[variable.text, item]])], ctx, depth)),
  };
}

export function apply(
  module: PythonModule,
  callee: Value,
  given: Arguments,
  node: Node,
  scopes: Scope[],
  ctx: Context,
  depth: number,
): Value {
  switch (callee.k) {
    case 'lambda': {
      const params =
        callee.node.childForFieldName('parameters')?.namedChildren.filter((p) => p?.type === 'identifier') ?? [];
      const body = callee.node.childForFieldName('body');
      const own: Scope = new Map(params.map((p, i) => [p!.text, given.args[i] ?? UNKNOWN]));
      return body ? module.expr(body, [...scopes, own], ctx, depth + 1) : UNKNOWN;
    }
    case 'func': {
      const { fn } = callee;
      fn.owner.walkFunction(fn);
      for (const sink of fn.sinks) {
        const args = sink.args.map((a) => substitute(a, given.args));
        checkSink(module, sink.path, { args, kw: sink.kw }, node, ctx, `${fn.name}() passes ${sink.at}`);
      }
      return fn.returns ? substitute(fn.returns, given.args) : UNKNOWN;
    }
    case 'methodcaller':
      return apply(
        module,
        member(given.args[0] ?? UNKNOWN, callee.name, module.selfAttrs, node),
        { args: callee.args, kw: new Map() },
        node,
        scopes,
        ctx,
        depth,
      );
    case 'attrgetter':
      return member(given.args[0] ?? UNKNOWN, callee.name, module.selfAttrs, node);
    case 'bound':
      return boundCall(module, callee.self, callee.name, given, node, ctx);
    case 'ref':
      checkSink(module, callee.path, given, node, ctx);
      return known(callee.path, given, module);
    default:
      return UNKNOWN;
  }
}

const DIRNAME = (text: string) => (text.includes('/') ? text.slice(0, text.lastIndexOf('/')) : UNKNOWN_PART);
const PASS_THROUGH = new Set([
  'os.path.expanduser',
  'os.path.abspath',
  'os.path.realpath',
  'os.path.normpath',
  'os.path.expandvars',
  'builtins.str',
  'os.fspath',
]);

/** What a call of a module member gives, where that is known. */
function known(path: string, { args, kw }: Arguments, module: PythonModule): Value {
  const name = constant(args[1]);
  const first = args[0] ?? UNKNOWN;
  switch (path) {
    case 'builtins.getattr':
      return name !== undefined ? member(first, name, module.selfAttrs, module.root) : UNKNOWN;
    case 'builtins.__import__':
    case 'importlib.import_module':
      return constant(first) ? ref(constant(first)!) : UNKNOWN;
    case 'builtins.globals':
    case 'builtins.locals':
      return { k: 'ns', path: '' };
    case 'builtins.vars':
      return first.k === 'ref' ? { k: 'ns', path: first.path } : args.length ? UNKNOWN : { k: 'ns', path: '' };
    case 'operator.methodcaller':
      return constant(first) ? { k: 'methodcaller', name: constant(first)!, args: args.slice(1) } : UNKNOWN;
    case 'operator.attrgetter':
      return constant(first) ? { k: 'attrgetter', name: constant(first)! } : UNKNOWN;
    case 'builtins.chr':
      return first.k === 'num' ? str(String.fromCharCode(first.v)) : UNKNOWN;
    case 'builtins.bytes':
    case 'builtins.bytearray':
      return first.k === 'list' && first.items.every((i) => i.k === 'num')
        ? str(first.items.map((i) => String.fromCharCode((i as { v: number }).v)).join(''))
        : first.k === 'str'
          ? first
          : UNKNOWN;
    case 'codecs.decode':
    case 'codecs.encode': {
      const encoding = constant(args[1] ?? kw.get('encoding'))
        ?.toLowerCase()
        .replace(/[-_]/g, '');
      return first.k === 'str' && encoding === 'rot13' ? str(rot13(first.v)) : UNKNOWN;
    }
    case 'os.path.join':
    case 'pathlib.Path':
    case 'pathlib.PurePath':
      return joinPath(args);
    case 'os.path.dirname':
      return first.k === 'str' ? str(DIRNAME(first.v)) : UNKNOWN;
    case 'pathlib.Path.home':
      return str('~');
    case 'tempfile.mkdtemp':
    case 'tempfile.gettempdir':
      return str(`${OWN}/${UNKNOWN_PART}tmp`);
    case 'site.getsitepackages':
      return { k: 'list', items: [str(SITE)] };
    case 'site.getusersitepackages':
    case 'sysconfig.get_path':
    case 'distutils.sysconfig.get_python_lib':
      return str(SITE);
    case 'sysconfig.get_paths':
      return {
        k: 'dict',
        entries: new Map([
          ['purelib', str(SITE)],
          ['platlib', str(SITE)],
        ]),
      };
    case 'builtins.open':
    case 'io.open':
      return { k: 'file', path: asText(first) ?? UNKNOWN_PART };
    case 'socket.socket':
      return { k: 'instance', of: 'socket.socket' };
  }
  if (PASS_THROUGH.has(path)) return first.k === 'str' ? first : UNKNOWN;
  if (/^(?:base64|binascii)\.\w+$/.test(path) || path === 'builtins.bytes.fromhex') {
    const text = constant(first);
    const decoded = text !== undefined ? decodeLiteral(path, text) : undefined;
    return decoded !== undefined ? str(decoded) : UNKNOWN;
  }
  return UNKNOWN;
}

/** A method of a known string, list, path or file. */
function boundCall(
  module: PythonModule,
  self: Value,
  name: string,
  { args, kw }: Arguments,
  node: Node,
  ctx: Context,
): Value {
  if (self.k === 'list') {
    if (name === 'append' || name === 'insert') self.items.push(args[name === 'insert' ? 1 : 0] ?? UNKNOWN);
    else if (name === 'extend') self.items.push(...(args[0]?.k === 'list' ? args[0].items : [UNKNOWN]));
    return UNKNOWN;
  }
  if (self.k === 'file') return name === 'read' || name === 'readlines' ? { k: 'filetext', path: self.path } : UNKNOWN;
  if (self.k !== 'str') return UNKNOWN;
  const text = self.v;
  switch (name) {
    case 'join': {
      const items = args[0]?.k === 'list' ? args[0].items.map((i) => asText(i) ?? UNKNOWN_PART) : undefined;
      return items ? str(items.join(text)) : UNKNOWN;
    }
    case 'format':
      return str(format(text, args, kw));
    case 'decode':
    case 'encode':
    case 'strip':
    case 'resolve':
    case 'absolute':
    case 'expanduser':
      return self;
    case 'lower':
      return str(text.toLowerCase());
    case 'upper':
      return str(text.toUpperCase());
    case 'replace':
      return constant(args[0]) !== undefined && constant(args[1]) !== undefined
        ? str(text.split(constant(args[0])!).join(constant(args[1])!))
        : UNKNOWN;
    case 'with_name':
    case 'joinpath':
      return name === 'with_name'
        ? str(`${DIRNAME(text)}/${asText(args[0] ?? UNKNOWN) ?? UNKNOWN_PART}`)
        : joinPath([self, ...args]);
    case 'read_text':
    case 'read_bytes':
      checkSink(module, 'pathlib.Path.read_text', { args: [self], kw }, node, ctx);
      return { k: 'filetext', path: text };
    case 'open':
      checkSink(module, 'builtins.open', { args: [self, ...args], kw }, node, ctx);
      return { k: 'file', path: text };
    case 'write_text':
    case 'write_bytes':
      checkSink(module, 'pathlib.Path.write_text', { args: [self], kw }, node, ctx);
      return UNKNOWN;
  }
  return UNKNOWN;
}
