// A node answer (GET /nodes/{id}, a review) is made by hono's context: headers a middleware set with
// c.header() before the route ran are on it, the 304 included, next to the answer's own.
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { Node } from '../../../src/contract/resources.js';
import { type NodeAnswer, respondWith } from '../../../src/server/node-answers.js';

const view = { id: 'kept', name: 'Kept', rating: 4 } as unknown as Node;
const body = JSON.stringify(view);
const answer: NodeAnswer = { key: 'k', publisher: undefined, view, body, etag: '"tag"' };

const app = new Hono();
app.use(async (c, next) => {
  c.header('X-Set-Before', 'yes');
  await next();
});
app.get('/nodes/kept', (c) => respondWith(c, answer));

describe('a node answer', () => {
  it('keeps the headers a middleware set before the route', async () => {
    const response = await app.request('/nodes/kept');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-set-before')).toBe('yes');
    expect(response.headers.get('etag')).toBe('"tag"');
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.text()).toBe(body);
  });

  it('keeps them on a 304 too', async () => {
    const response = await app.request('/nodes/kept', { headers: { 'If-None-Match': 'W/"tag"' } });
    expect(response.status).toBe(304);
    expect(response.headers.get('x-set-before')).toBe('yes');
    expect(response.headers.get('etag')).toBe('"tag"');
  });
});
