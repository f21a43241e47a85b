// Field rules shared by many bodies: bounded text and lists, URLs, version ranges, translations.
// Every string and array a request may carry is bounded here, so that what a request costs to parse,
// validate, store and list again is bounded too (RELIABILITY.md, "Bounded work per request").
import validRange from 'semver/ranges/valid.js';
import * as z from 'zod';
import { TRANSLATIONS, URL_MAX, VERSION_RANGE_MAX } from './limits.js';
import { isHttpUrl } from './url.js';
import './messages.js'; // the contract's error map, for every schema

export const text = (max: number) => z.string().max(max);

/** A list of short strings: at most `maxItems` items of at most `maxLength` characters. */
export const list = ({ maxItems, maxLength }: { maxItems: number; maxLength: number }) =>
  z.array(z.string().max(maxLength)).max(maxItems);

const HTTP_URL_RULE = 'must be an absolute http:// or https:// URL, such as https://example.com/icon.png';

/** An absolute http(s) URL, as callbacks need. */
export const httpUrl = z.string().max(URL_MAX, { abort: true }).refine(isHttpUrl, HTTP_URL_RULE);

/** A URL field of the metadata: an http(s) URL, or the empty string, which means "unset". */
export const urlField = z.string().max(URL_MAX, { abort: true }).refine((value) => value === '' || isHttpUrl(value), `${HTTP_URL_RULE} (or "" for none)`);

/**
 * Reads a version requirement as a semver range: `>=1.0.0`, `>=1.0.0 <2.0.0`, `^1.2`, `*`; parts may
 * also be separated by commas and `==` is taken as `=`, as Python writes them. Undefined when it is none.
 */
export function versionRange(value: string): string | undefined {
  const normalised = value.replace(/==/g, '=').replace(/\s*,\s*/g, ' ').trim();
  return validRange(normalised) ?? undefined;
}

/** A version requirement field: a range of versions (see versionRange), or "" for none. */
export const versionRangeField = z
  .string()
  .max(VERSION_RANGE_MAX, { abort: true })
  .refine(
    (value) => value === '' || versionRange(value) !== undefined,
    'must be a version range such as >=1.0.0 or >=1.0.0 <2.0.0 (or "" for none)',
  );

/**
 * Translations of the metadata, by language: `{"fr": {"name": "…"}}`. The inside of each language is
 * left to the client (the interface does not show it), so the whole is bounded by its JSON size.
 */
export const translations = z
  .record(z.string().max(TRANSLATIONS.languageMaxLength), z.unknown())
  .refine((value) => Object.keys(value).length <= TRANSLATIONS.maxLanguages, `must hold at most ${TRANSLATIONS.maxLanguages} languages`)
  .refine((value) => JSON.stringify(value).length <= TRANSLATIONS.maxJsonLength, `must be at most ${TRANSLATIONS.maxJsonLength} characters as JSON`);
