import { defineRule, keywordArgument, positional } from '../rule.js';

const SAFE_LOADER = /Safe|CSafe|BaseLoader/;

export default defineRule({
  id: 'unsafe-deserialization',
  severity: 'medium',
  description:
    '`pickle`/`dill` loads, `torch.load` without `weights_only=True`, or `yaml.load` without a safe loader: loading a file runs code it contains.',
  hint: 'use safetensors, torch.load(..., weights_only=True), yaml.safe_load or json',
  requires: { names: ['pickle', 'cPickle', '_pickle', 'dill', 'cloudpickle', 'joblib', 'torch', 'yaml'] },
  patterns: {
    python: `
((call function: (attribute object: (identifier) @object attribute: (identifier) @name)) @finding
 (#any-of? @object "pickle" "cPickle" "_pickle" "dill" "cloudpickle" "joblib") (#any-of? @name "load" "loads" "Unpickler"))
((call function: (attribute object: (identifier) @object attribute: (identifier) @name) arguments: (argument_list) @args) @finding
 (#eq? @object "torch") (#eq? @name "load"))
((call function: (attribute object: (identifier) @object attribute: (identifier) @name) arguments: (argument_list) @args) @finding
 (#eq? @object "yaml") (#any-of? @name "load" "load_all" "unsafe_load" "unsafe_load_all"))`,
  },
  check: ({ object, name, args }) => {
    const call = `${object.text}.${name.text}()`;
    if (object.text === 'torch') {
      return keywordArgument(args, 'weights_only')?.text === 'True'
        ? undefined
        : `${call} without weights_only=True can run code in the file`;
    }
    if (object.text === 'yaml' && name.text.startsWith('load')) {
      const loader = keywordArgument(args, 'Loader') ?? positional(args)[1];
      if (loader && SAFE_LOADER.test(loader.text)) return undefined;
      // FullLoader has refused arbitrary objects since PyYAML 5.4; before it, it ran code (CVE-2020-14343)
      if (loader && /FullLoader/.test(loader.text))
        return `${call} with FullLoader builds Python objects of a fixed set of types (arbitrary ones only before PyYAML 5.4, which ran code in the file)`;
      return `${call} without a safe loader can build any Python object`;
    }
    return `${call} can run code in the data it loads`;
  },
  examples: {
    python: {
      bad: `import pickle, dill, torch, yaml

def restore(path, blob):
    with open(path, "rb") as handle:
        state = pickle.load(handle)  # finding
    extra = dill.loads(blob)  # finding
    model = torch.load(path)  # finding
    legacy = torch.load(path, weights_only=False)  # finding
    config = yaml.load(open(path), Loader=yaml.Loader)  # finding
    return state, extra, model, legacy, config
`,
      good: `import pickle, torch, yaml
"""pickle.load(handle) is never used."""

def restore(path):
    # state = pickle.load(handle)
    text = "torch.load(path)"
    model = torch.load(path, weights_only=True)
    config = yaml.safe_load(open(path))
    other = yaml.load(open(path), Loader=yaml.SafeLoader)
    blob = pickle.dumps(config)
    return model, config, other, blob, text
`,
    },
  },
});
