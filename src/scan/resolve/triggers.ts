// Which files and statements the resolution layer reads at all, and its bounds per file.
import type { ParsedLanguage } from '../rule.js';

/** Syntax nodes the layer visits per file at most, and how deep it follows nesting (CPython refuses more than 200 nested brackets). */
export const RESOLVE_LIMITS = { budget: 100_000, maxDepth: 200 };

/**
 * A file the layer reads names one of these (or holds a string the layer decodes into one): every sink,
 * and every way to reach one indirectly. A file without any has no call the layer could resolve to a sink.
 */
const TRIGGERS: Record<ParsedLanguage, RegExp> = {
  python:
    /\b(?:exec|eval|compile|system|popen|spawn\w*|exec[lv]p?e?|posix_spawnp?|getoutput|getstatusoutput|subprocess|create_subprocess_\w+|getattr|setattr|globals|vars|locals|__builtins__|builtins|__dict__|modules|methodcaller|attrgetter|import_module|__import__|__call__|pip|install|runpy|pickle|cPickle|_pickle|dill|cloudpickle|joblib|marshal|rmtree|remove|unlink|rmdir|removedirs|socket|requests|httpx|urllib3?|aiohttp|urlopen|urlretrieve|http|SourceFileLoader|spec_from_file_location|load_source|run_path|cmdclass|getsitepackages|getusersitepackages|sysconfig|copy|copy2|copyfile|move|rename|write_text|write_bytes|open|lambda|addsitedir|zipimport|zipimporter)\b|\.zip\b/,
  javascript:
    /\b(?:eval|Function|constructor|setTimeout|setInterval|setImmediate|execScript|import|createElement|window|globalThis|self|top|parent|frames)\b/,
};

export const needsResolution = (language: ParsedLanguage, text: string) => TRIGGERS[language].test(text);
