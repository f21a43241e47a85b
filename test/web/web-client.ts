// A browser's requests without a browser: pages asked for as HTML, cookies kept, forms posted with the
// page's CSRF token and this registry's Origin.
import { expect } from 'vitest';
import type { TestServer } from '../helpers.js';

export const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

export interface WebReply {
  status: number;
  headers: Headers;
  text: string;
}

export function webClient(server: TestServer) {
  const cookies = new Map<string, string>();
  const keep = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const value = pair.slice(at + 1);
      if (value && !/max-age=0/i.test(line)) cookies.set(pair.slice(0, at), value);
      else cookies.delete(pair.slice(0, at));
    }
  };
  const cookie = () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  const request = async (method: string, path: string, headers: Record<string, string>, body?: string) => {
    const response = await fetch(server.url + path, {
      method,
      headers: { accept: BROWSER_ACCEPT, cookie: cookie(), ...headers },
      body,
      redirect: 'manual',
    });
    keep(response);
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
  const web = {
    cookies,
    get: (path: string) => request('GET', path, {}),
    /** Posts a form; `origin` null sends none. */
    post: (path: string, fields: Record<string, string>, origin: string | null = server.url) =>
      request(
        'POST',
        path,
        { 'content-type': 'application/x-www-form-urlencoded', ...(origin === null ? {} : { origin }) },
        new URLSearchParams(fields).toString(),
      ),
    /** The CSRF token of the forms on this page. */
    async csrf(path: string): Promise<string> {
      const page = await web.get(path);
      const token = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1];
      expect(token, page.text).toBeDefined();
      return token!;
    },
    async signIn(token: string) {
      const reply = await web.post('/web/sign-in', { token, csrf: await web.csrf('/web/sign-in') });
      expect(reply.status, reply.text).toBe(303);
      return reply;
    },
  };
  return web;
}
