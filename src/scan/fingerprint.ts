// A finding's fingerprint: the same from one version to the next while the code it points at stays
// the same, wherever the code moves and however its variables are renamed. Made of the rule, the code
// (comments and whitespace out, every name that is not a module or an attribute made `_`) and the
// name of the function it is in.
import { createHash } from 'node:crypto';
import type { Node } from 'web-tree-sitter';

/** The finding's code, normalised: `os.system(cmd)` and `os.system( command )` read alike. */
export function normalisedCode(code: string): string {
  return (
    code
      .replace(/(^|\s)(?:#|\/\/)[^\n]*/g, '$1')
      .replace(/\s+/g, '')
      .slice(0, 2000)
      // a name followed by `.` or `(` (a module, a callee) or preceded by `.` (an attribute) stays; others are renamed freely
      .replace(/(?<![.\w'"])([A-Za-z_]\w*)(?![\w.(])/g, '_')
  );
}

export function fingerprintOf(rule: string, code: string, within: string): string {
  return createHash('sha256')
    .update(`${rule}\0${normalisedCode(code)}\0${within}`)
    .digest('hex')
    .slice(0, 24);
}

/** The name of the function (or class) a node is in, innermost first, dotted: `Loader.run`; '' at module level. */
export function enclosingFunction(node: Node): string {
  const names: string[] = [];
  let depth = 0;
  // the functions that hold code lie near the top; a finding 100,000 brackets deep is not walked to
  for (
    let n: Node | null = node.tree.rootNode;
    n && n.id !== node.id && depth++ < 200;
    n = n.childWithDescendant(node)
  ) {
    if (
      /^(?:function_definition|class_definition|function_declaration|method_definition|class_declaration)$/.test(n.type)
    ) {
      const name = n.childForFieldName('name')?.text;
      if (name) names.push(name);
    }
  }
  return names.join('.');
}
