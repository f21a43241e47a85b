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
import persistence from './persistence.js';
import exfiltration from './exfiltration.js';
import codeInData from './code-in-data.js';
import installHook from './install-hook.js';
import pthFile from './pth-file.js';
import unsafeRequirement from './unsafe-requirement.js';
import knownBadPin from './known-bad-pin.js';
import jsRemoteCode from './js-remote-code.js';
import notFullyAnalysed from './not-fully-analysed.js';

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
  jsRemoteCode,
  persistence,
  exfiltration,
  codeInData,
  installHook,
  pthFile,
  unsafeRequirement,
  knownBadPin,
  notFullyAnalysed,
];
