import * as z from 'zod';

export const Health = z.looseObject({ ok: z.boolean(), version: z.string().optional() });

/** What a registry takes (`serve --max-archive`, `--max-unpacked`), so a client can check before it publishes. */
export const RegistryLimits = z.looseObject({
  max_archive: z.number().int().describe('largest archive, in bytes (compressed)'),
  max_unpacked: z.number().int().describe('largest total size of the files in an archive, in bytes'),
  max_entries: z.number().int().describe('most entries an archive may hold'),
});
export type RegistryLimits = z.infer<typeof RegistryLimits>;
