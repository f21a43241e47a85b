// Every rule of the scanner, one file each (docs/scan.md's rule table follows this order).
import type { Rule } from '../rule.js';
import bytecodeManipulation from './bytecode-manipulation.js';
import commandInjection from './command-injection.js';
import destructiveFs from './destructive-fs.js';
import dynamicExecution from './dynamic-execution.js';
import environmentManipulation from './environment-manipulation.js';
import jsDynamicExecution from './js-dynamic-execution.js';
import networkAtImport from './network-at-import.js';
import obfuscation from './obfuscation.js';
import prohibitedString from './prohibited-string.js';
import runtimeInstall from './runtime-install.js';
import unsafeDeserialization from './unsafe-deserialization.js';

export const rules: readonly Rule[] = [
  dynamicExecution,
  runtimeInstall,
  obfuscation,
  commandInjection,
  environmentManipulation,
  networkAtImport,
  destructiveFs,
  bytecodeManipulation,
  unsafeDeserialization,
  prohibitedString,
  jsDynamicExecution,
];
