import { defineRule, stringsIn } from '../rule.js';

const INSTALLER = /(^|[\s/\\])(pip3?|uv|conda|mamba|micromamba)(\.exe)?(\s|$)/;
const INSTALL = /(^|\s)install(\s|$)/;
const REQUIREMENTS_FILE = /(^|\s)(-r|--requirement)(\s|=|$)/;
/** An install of a requirements file: the host installs the node's requirements.txt itself, so the plain fix is to drop the call. */
const REQUIREMENTS_HINT =
  "the host installs the node's requirements.txt itself (ComfyUI-Manager does, before it runs install.py): remove this call, or the whole install.py when installing is all it does, and keep the packages in requirements.txt (the manager installs that file; it does not read [project] dependencies)";

export default defineRule({
  id: 'runtime-install',
  severity: 'high',
  description:
    "Installs packages from code (pip, uv or conda through subprocess, or `pip.main`): what gets installed is decided at run time, outside the user's control.",
  hint: 'list the packages in requirements.txt and let the host install them (the manager installs requirements.txt; it does not read [project] dependencies)',
  requires: { names: ['install', 'main'] },
  patterns: {
    python: `
((call function: (attribute object: (_) @object attribute: (identifier) @name)) @finding
 (#match? @object "^pip(\\\\._internal(\\\\.cli\\\\.main)?)?$") (#eq? @name "main"))
((call function: (attribute object: (identifier) @object attribute: (identifier) @name) arguments: (argument_list) @args) @finding
 (#any-of? @object "subprocess" "os")
 (#any-of? @name "run" "call" "check_call" "check_output" "Popen" "system" "popen" "getoutput" "getstatusoutput"))`,
  },
  check: ({ object, name, args }) => {
    if (!args) return `${object.text}.${name.text}() installs packages at run time`;
    const command = stringsIn(args).join(' ');
    if (!INSTALLER.test(command) || !INSTALL.test(command)) return undefined;
    const message = `${object.text}.${name.text}() runs a package install: ${command.slice(0, 80)}`;
    return REQUIREMENTS_FILE.test(command) ? { message, hint: REQUIREMENTS_HINT } : message;
  },
  examples: {
    python: {
      bad: `import os, subprocess, sys
import pip

def setup():
    subprocess.check_call([sys.executable, "-m", "pip", "install", "numpy"])  # finding
    os.system("uv pip install torch")  # finding
    subprocess.run("conda install -y ffmpeg", shell=True)  # finding
    pip.main(["install", "requests"])  # finding
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-r", requirements])  # finding
`,
      good: `import subprocess, sys
"""Do not run subprocess.check_call([sys.executable, "-m", "pip", "install", "numpy"])."""

def setup():
    # subprocess.check_call([sys.executable, "-m", "pip", "install", "numpy"])
    hint = 'subprocess.check_call([sys.executable, "-m", "pip", "install", "numpy"])'
    subprocess.run(["git", "status"])
    return subprocess.check_output([sys.executable, "-m", "pip", "list"]), hint
`,
    },
  },
});
