// The wire rules of an archive upload (src/contract/upload.ts): the forms of a signed URL's query and
// of the X-Content-SHA256 header, checked through the contract by the server and listed in OpenAPI.
import { describe, expect, it } from 'vitest';
import { openapiDocument } from '../../src/contract/openapi.js';
import { UploadHeaders, UploadQuery } from '../../src/contract/registry.js';
import { contentSha256Problem, isUploadQueryForm } from '../../src/contract/upload.js';

const hex64 = 'aB'.repeat(32);

describe('a signed upload URL query', () => {
  it('takes expires as up to 15 digits and signature as 64 hex characters, and nothing else', () => {
    expect(isUploadQueryForm('1700000000', hex64)).toBe(true);
    expect(isUploadQueryForm('9'.repeat(15), hex64)).toBe(true);
    for (const [expires, signature] of [
      ['', hex64],
      ['1e20', hex64],
      ['9'.repeat(16), hex64],
      ['-1', hex64],
      ['17', ''],
      ['17', 'z'.repeat(64)],
      ['17', hex64.slice(2)],
      ['17', `${hex64}0`],
    ]) {
      expect(isUploadQueryForm(expires, signature), `${expires} ${signature}`).toBe(false);
    }
  });

  it('the schema of the operation follows the same rule', () => {
    expect(UploadQuery.safeParse({ expires: '1700000000', signature: hex64 }).success).toBe(true);
    expect(UploadQuery.safeParse({ expires: '1e20', signature: hex64 }).success).toBe(false);
    expect(UploadQuery.safeParse({ expires: '17', signature: 'z'.repeat(64) }).success).toBe(false);
  });
});

describe('the X-Content-SHA256 header', () => {
  it('is absent or 64 hex characters; otherwise its 400 says what it must be', () => {
    expect(contentSha256Problem(undefined)).toBeUndefined();
    expect(contentSha256Problem(hex64)).toBeUndefined();
    expect(contentSha256Problem('abc')).toBe("X-Content-SHA256 must be the archive's SHA-256 as 64 hex characters");
    expect(UploadHeaders.safeParse({ 'X-Content-SHA256': 'abc' }).success).toBe(false);
    expect(UploadHeaders.safeParse({}).success).toBe(true);
  });

  it('is listed with its pattern in the OpenAPI document, as are expires and signature', () => {
    const paths = openapiDocument('0.0.0').paths as Record<
      string,
      Record<string, { parameters: { name: string; in: string; required: boolean; schema: { pattern?: string } }[] }>
    >;
    const parameters = paths['/uploads/{versionId}'].put.parameters;
    expect(parameters.find((p) => p.name === 'X-Content-SHA256')).toMatchObject({
      in: 'header',
      required: false,
      schema: { pattern: '^[0-9a-fA-F]{64}$' },
    });
    expect(parameters.find((p) => p.name === 'expires')).toMatchObject({
      in: 'query',
      required: true,
      schema: { pattern: '^\\d{1,15}$' },
    });
    expect(parameters.find((p) => p.name === 'signature')).toMatchObject({
      in: 'query',
      required: true,
      schema: { pattern: '^[0-9a-fA-F]{64}$' },
    });
  });
});
