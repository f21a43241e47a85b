import { defineRule, isLiteral } from '../rule.js';

export default defineRule({
  id: 'command-injection',
  severity: 'high',
  description:
    '`os.system`, `os.popen` or subprocess with `shell=True` on a command built at run time: a file name or prompt can run shell commands.',
  hint: 'pass the command as a list to subprocess.run without shell=True',
  requires: { names: ['system', 'popen', 'shell', 'getoutput', 'getstatusoutput'] },
  patterns: {
    python: `
((call function: (attribute object: (identifier) @object attribute: (identifier) @name) arguments: (argument_list . (_) @arg)) @finding
 (#eq? @object "os") (#any-of? @name "system" "popen"))
((call function: (attribute object: (identifier) @object attribute: (identifier) @name)
  arguments: (argument_list . (_) @arg (keyword_argument name: (identifier) @keyword value: (true)))) @finding
 (#eq? @object "subprocess") (#any-of? @name "run" "call" "check_call" "check_output" "Popen") (#eq? @keyword "shell"))
((call function: (attribute object: (identifier) @object attribute: (identifier) @name) arguments: (argument_list . (_) @arg)) @finding
 (#eq? @object "subprocess") (#any-of? @name "getoutput" "getstatusoutput"))`,
  },
  check: ({ object, name, arg }) => {
    const value = arg.type === 'keyword_argument' ? arg.childForFieldName('value') : arg;
    return isLiteral(value) ? undefined : `${object.text}.${name.text}() runs a shell command built at run time`;
  },
  examples: {
    python: {
      bad: `import importlib, os, subprocess

def convert(path, options):
    getattr(os, "system")(path)  # finding
    __import__("os").system(path)  # finding
    importlib.import_module("subprocess").getoutput(path)  # finding
    os.system("ffmpeg -i " + path)  # finding
    stream = os.popen(f"identify {path}")  # finding
    subprocess.run(f"convert {path} out.png", shell=True)  # finding
    return subprocess.getoutput(options)  # finding
`,
      good: `import os, subprocess
"""os.system("ffmpeg -i " + path) is what we avoid."""

def convert(path):
    # os.system("ffmpeg -i " + path)
    note = 'os.system("ffmpeg -i " + path)'
    os.system("clear")
    subprocess.run(["ffmpeg", "-i", path, "out.png"])
    subprocess.run("ls -l", shell=True)
    return note
`,
    },
  },
});
