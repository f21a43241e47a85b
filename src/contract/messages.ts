// The one error map of the contract (its words are in issue-words.ts): what a broken rule says. The
// server puts the field's path before it; the CLI, the flag or the manifest key. Set for every zod
// schema once this module is loaded (fields.ts loads it, and every schema file loads fields.ts).
import * as z from 'zod';
import { issueMessage } from './issue-words.js';

export { issueMessage };

z.config({ customError: issueMessage });
