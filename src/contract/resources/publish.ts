import * as z from 'zod';
import { IDENTIFIER_MAX } from '../limits.js';
import { NodeInput } from './node.js';
import { NodeVersion, NodeVersionInput } from './node-version.js';

export const PublishBody = z.object({
  node: NodeInput.default({}),
  node_version: NodeVersionInput,
  personal_access_token: z.string().min(1).max(IDENTIFIER_MAX).optional(),
});
export type PublishBody = z.input<typeof PublishBody>;

export const PublishResponse = z.looseObject({ node_version: NodeVersion, signedUrl: z.string() });
export type PublishResponse = z.infer<typeof PublishResponse>;
