// Every operation of the contract as the client sends it: its method, path and answer kind (the
// generated routes, free of zod at run time), typed with the operation's params, query, body and
// answer, so that one `call` serves them all.
import { routes as wireRoutes, type Route as WireRoute } from '../contract/answers.js';
import type { Operation } from '../contract/operation.js';
import type * as proxy from '../contract/proxy.js';
import type * as registry from '../contract/registry.js';
import type * as mirror from '../contract/mirror.js';
import type * as trust from '../contract/trust.js';
import type * as admin from '../contract/admin.js';
import type * as webhooks from '../contract/webhooks.js';

type Exported = typeof registry & typeof proxy & typeof mirror & typeof trust & typeof admin & typeof webhooks;
/** The names under which the contract exports its operations; each is the operation's id. */
export type OperationName = { [K in keyof Exported]: Exported[K] extends Operation ? K : never }[keyof Exported];

declare const operationType: unique symbol;

/** A route of the contract, typed with the operation it sends: only `routes` gives one (the type has no value at run time). */
export interface Route<O extends Operation = Operation> extends WireRoute {
  readonly [operationType]: O;
}

/** The route of each operation, by its id (test/cli/client-routes.test.ts holds them to the contract's operations). */
export const routes = wireRoutes as unknown as {
  readonly [K in OperationName]: Route<Extract<Exported[K], Operation>>;
};
