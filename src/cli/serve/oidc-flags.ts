// The flags of `nodereg serve` for trusted publishing (DESIGN.md §15): the OIDC issuers a trust may
// name, beside the built-in github and gitlab, and the audience their tokens must carry.
import type { Command } from 'commander';
import type { RegistryServerOptions } from '../../server/options.js';
import { invalidInput } from '../errors.js';

export interface OidcFlags {
  oidcIssuer?: string[];
  oidcAudience?: string;
}

export function addOidcFlags(command: Command): Command {
  return command
    .option(
      '--oidc-issuer <name=url...>',
      'an OIDC issuer trusts may name, by its issuer URL (a self-hosted GitLab: gitlab=https://gitlab.example.com); github and gitlab are built in (env NODEREG_OIDC_ISSUERS, comma-separated)',
    )
    .option(
      '--oidc-audience <aud>',
      'the audience CI jobs request their OIDC tokens for (default: the public URL; env NODEREG_OIDC_AUDIENCE)',
    );
}

const EXAMPLE = '--oidc-issuer gitlab=https://gitlab.example.com';

/** The issuers and audience from the flags (or their variables, sources.ts), each checked. */
export function oidcOptionsFromFlags(flags: OidcFlags): Pick<RegistryServerOptions, 'oidcIssuers' | 'oidcAudience'> {
  const given = flags.oidcIssuer ?? [];
  const issuers: Record<string, string> = {};
  for (const pair of given) {
    const at = pair.indexOf('=');
    const name = pair.slice(0, at).trim();
    const url = pair.slice(at + 1).trim();
    if (at < 1 || !/^[a-z0-9][a-z0-9_-]*$/i.test(name))
      throw invalidInput(`--oidc-issuer takes NAME=URL (got "${pair}")`, EXAMPLE);
    if (!/^https?:\/\/[^/]/.test(url) || !URL.canParse(url))
      throw invalidInput(`--oidc-issuer ${name}: "${url}" is not an http or https URL`, EXAMPLE);
    issuers[name] = url;
  }
  const audience = flags.oidcAudience || undefined;
  return {
    ...(given.length ? { oidcIssuers: issuers } : {}),
    ...(audience ? { oidcAudience: audience } : {}),
  };
}
