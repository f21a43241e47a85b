// Commands printed in hints and results are written as the user started the CLI (invocation.ts), so
// that they run as printed: `npx nodereg …` from a project, `node bin/nodereg.js …` from a checkout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers.js';
import { createUser } from '../server/fixtures.js';
import { runInProcess } from './in-process.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

describe('commands in hints as the CLI was started', () => {
  it("whoami's hint for a user without publishers names the command as invoked", async () => {
    const user = await createUser(server);
    const env = { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: user.token };
    const result = await runInProcess(['whoami'], { env, invocation: 'npx nodereg' });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('publishers: none yet (create one: npx nodereg publisher create <id>)');
  });
});
