// The types of scripts/request-checks.js, for the tests of the generator.
/** zod, rules.ts, version-range.ts and the named rules of fields.ts: what the generator reads the schemas with. */
export interface Contract {
  z: unknown;
  rules: unknown;
  ranges: unknown;
  namedRules: unknown;
  resources?: unknown;
}
/** The ES module of the checks of `requests` (id → zod schema), and its type declarations. */
export function checksModule(
  contract: Contract,
  requests: Record<string, unknown>,
  extra?: { code: string[]; types: string[] },
  worded?: boolean,
): { code: string; types: string };
export function writeRequestChecks(contract: Contract, out: string): void;
