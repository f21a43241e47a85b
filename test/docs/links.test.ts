// The README is a newcomer's first page: short, it keeps the two commands CI runs, and it links every
// page of docs/. Every relative link of the docs points at a file that exists, and at a heading in it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const pages = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md'));
const documents = ['README.md', 'RELIABILITY.md', ...pages.map((name) => `docs/${name}`)];

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as dashes. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(path: string): Set<string> {
  const text = read(path).replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1])));
}

/** The relative links of a markdown file (outside code blocks), as `[file, anchor?]` from the root. */
function linksOf(path: string): { target: string; hash?: string; written: string }[] {
  const text = read(path).replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((href) => !/^[a-z]+:/.test(href))
    .map((href) => {
      const [file, hash] = href.split('#');
      return { target: file ? join(dirname(path), file) : path, hash, written: href };
    });
}

describe('README.md', () => {
  const readme = read('README.md');

  it('is at most 150 lines and keeps the commands CI runs', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(150);
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm ci && npm test');
  });

  it('says that building the native SQLite module from source needs a C++ toolchain (issue 37)', () => {
    const install = readme.slice(0, readme.indexOf('## Publish your first node'));
    expect(install).toContain('better-sqlite3');
    expect(install).toMatch(/builds it from source, which\s+needs a C\+\+ toolchain/);
  });

  it('links every page of docs/', () => {
    const linked = new Set(linksOf('README.md').map((link) => link.target));
    expect(pages.filter((name) => !linked.has(`docs/${name}`))).toEqual([]);
  });
});

describe('links in the docs', () => {
  it.each(documents)('every relative link of %s points at a file and a heading that exist', (path) => {
    const broken = linksOf(path).filter(
      (link) =>
        !existsSync(join(ROOT, link.target)) ||
        (link.hash !== undefined && link.target.endsWith('.md') && !anchorsOf(link.target).has(link.hash)),
    );
    expect(broken.map((link) => link.written)).toEqual([]);
  });
});
