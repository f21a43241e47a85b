// A registry's id (DESIGN.md §16): made once, kept in its database, and named in the claim object of
// its archive storage, so that two registries never share one bucket or dir.
import { randomUUID } from 'node:crypto';

export const newRegistryId = () => randomUUID();
