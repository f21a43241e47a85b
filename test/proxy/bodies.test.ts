// The AI proxy's body worker (src/server/proxy/bodies.ts): a body whose worker ends before it answers
// fails (the route answers 500) instead of waiting for ever, whether or not the worker said why.
import { expect, it } from 'vitest';
import { createBodyPreparer } from '../../src/server/proxy/bodies.js';

it('fails a body that its worker ended without an answer, and prepares the next one in a new worker', async () => {
  const bodies = createBodyPreparer();
  const large = () => Buffer.from(`{"image": "${'a'.repeat(300 * 1024)}`); // over the inline size, and malformed
  const pending = bodies.prepare('relight', large(), false);
  await bodies.close(); // ends the worker with no 'error' event
  const settled = await Promise.race([
    pending.then(
      () => 'prepared',
      (error: Error) => `failed: ${error.message}`,
    ),
    new Promise((resolve) => setTimeout(() => resolve('still waiting after 5 s'), 5_000)),
  ]);
  expect(settled).toMatch(/^failed: the AI proxy body worker ended/);
  await expect(bodies.prepare('relight', large(), false)).rejects.toMatchObject({ status: 400 });
  await bodies.close();
});
