// The request a piece of server work runs for, kept across its awaits: serve's log writer reads its
// id (a light module: the CLI's log writer imports it).
import { AsyncLocalStorage } from 'node:async_hooks';

export const requestScope = new AsyncLocalStorage<{ id: string }>();

/** The id of the request the caller runs in, if any. */
export const currentRequestId = () => requestScope.getStore()?.id;
