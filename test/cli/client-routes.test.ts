// The client's typed routes (src/client/routes.ts) are the contract's operations: each exported
// operation's route has its id, method, path and answer kind, under the name it is exported as.
import { describe, expect, it } from 'vitest';
import { routes } from '../../src/client/routes.js';
import { allOperations } from '../../src/contract/openapi.js';
import * as proxy from '../../src/contract/proxy.js';
import * as registry from '../../src/contract/registry.js';
import * as mirror from '../../src/contract/mirror.js';
import * as trust from '../../src/contract/trust.js';
import * as admin from '../../src/contract/admin.js';
import * as webhooks from '../../src/contract/webhooks.js';

const nameOf = new Map<unknown, string>(
  Object.entries({ ...registry, ...proxy, ...mirror, ...trust, ...admin, ...webhooks }).map(([name, value]) => [
    value,
    name,
  ]),
);
const exported = allOperations.map((operation) => [nameOf.get(operation) ?? '(not exported)', operation] as const);

describe('client routes', () => {
  it('has every operation of the contract', () => {
    expect(exported.length).toBeGreaterThan(30);
    expect(Object.keys(routes).sort()).toEqual(exported.map(([name]) => name).sort());
  });

  it.each(exported)('%s: the route of the operation exported under that name', (name, operation) => {
    expect(operation.id).toBe(name);
    expect(routes[name as keyof typeof routes]).toEqual({
      id: operation.id,
      method: operation.method,
      path: operation.path,
      responseKind: operation.responseKind,
      repeatable: operation.repeatable,
    });
  });
});
