// pyproject.toml → publish request (DESIGN.md §6): the mapping table, the version conversions and
// their errors, and problems named by the key to fix, all of them at once.
import { describe, expect, it } from 'vitest';
import { pep440ToSemver, toolVersionToSemver } from '../../src/package/manifest.js';
import { loadProject } from '../../src/package/project.js';
import { tempDir } from '../helpers.js';
import { writeTree } from './fixtures.js';

function project(pyproject: string, extra: Record<string, string> = {}, options: Parameters<typeof loadProject>[1] = {}) {
  const dir = writeTree(tempDir(), { 'pyproject.toml': pyproject, 'node.py': 'print(1)\n', ...extra });
  return loadProject(dir, { requirePublisher: true, ...options });
}

const problems = (p: ReturnType<typeof project>) => p.problems.map((x) => `${x.key}: ${x.message}`);

describe('versions: PEP 440 → semver', () => {
  it.each([
    ['1.2.3', '1.2.3'],
    ['1.2', '1.2.0'],
    ['1', '1.0.0'],
    ['v1.2.3', '1.2.3'],
    ['1.2.3a1', '1.2.3-alpha.1'],
    ['1.2.3b2', '1.2.3-beta.2'],
    ['1.2.3rc3', '1.2.3-rc.3'],
    ['1.2rc1', '1.2.0-rc.1'],
    ['1.0.0-alpha.4', '1.0.0-alpha.4'],
    ['1.0.0.beta1', '1.0.0-beta.1'],
    ['2.0c1', '2.0.0-rc.1'],
    ['2.0.0preview2', '2.0.0-rc.2'],
    ['1.0a', '1.0.0-alpha.0'],
    ['01.02.03', '1.2.3'],
    ['1.2.3RC1', '1.2.3-rc.1'],
  ])('%s → %s', (pep440, semver) => {
    expect(pep440ToSemver(pep440)).toEqual({ version: semver });
  });

  it.each([
    ['1!2.0', /epoch \(1!\).*write "2\.0\.0" in \[tool\.nodereg\] version/],
    ['1.2.3.post1', /post-release.*next patch version instead \(e\.g\. "1\.2\.4"\)/],
    ['1.2.3-1', /post-release/],
    ['1.2.3.dev4', /development release.*"1\.2\.3a1".*1\.2\.3-alpha\.1.*version = "1\.2\.3-dev\.4"/],
    ['1.2.3+local.7', /local version \(\+local\.7\).*drop "\+local\.7"/],
    ['1.2.3.4', /4 release numbers.*three \(X\.Y\.Z\)/],
    ['latest', /"latest" is not a version: write X\.Y\.Z/],
    ['', /is not a version/],
  ])('%j is an error that says what to write', (pep440, message) => {
    const result = pep440ToSemver(pep440);
    expect('error' in result && result.error).toMatch(message);
  });

  it('[tool.nodereg] version takes semver as it is (so "1.0.0-1" is a pre-release there), else PEP 440', () => {
    expect(toolVersionToSemver('1.0.0-1')).toEqual({ version: '1.0.0-1' });
    expect(pep440ToSemver('1.0.0-1')).toMatchObject({ error: expect.stringMatching(/post-release/) });
    expect(toolVersionToSemver('v2.0.0-dev.3')).toEqual({ version: '2.0.0-dev.3' });
    expect(toolVersionToSemver('2.1')).toEqual({ version: '2.1.0' });
    expect(toolVersionToSemver('1.2.3+build.5')).toMatchObject({ error: expect.stringMatching(/local version/) });
  });
});

describe('the mapping table', () => {
  const full = `
[project]
name = "my-node"
version = "1.4rc2"
description = "Makes pictures nicer"
authors = [{ name = "Ada Lovelace", email = "ada@example.org" }, { name = "Bob" }]
license = "MIT"
dependencies = ["numpy>=1.26", "pillow"]

[project.urls]
Homepage = "https://example.org"
"Source Code" = "https://git.example.org/ada/my-node"

[tool.nodereg]
publisher = "ada"
display-name = "My Node"
icon = "https://example.org/icon.png"
banner-url = "https://example.org/banner.png"
tags = ["image", "upscale"]
supported-os = ["linux", "windows"]
supported-accelerators = ["cuda"]
requires-app = ">=0.3.0"
requires-app-frontend = ">=1.2"
preempted-app-node-names = ["OldNode"]
`;

  it('maps every key to its request field', () => {
    const p = project(full, { LICENSE: 'MIT…' }, { changelog: { text: 'Fixed things', source: '--changelog' } });
    expect(p.problems).toEqual([]);
    expect(p.request).toEqual({
      publisherId: 'ada',
      nodeId: 'my-node',
      version: '1.4.0-rc.2',
      body: {
        node: {
          id: 'my-node',
          name: 'My Node',
          description: 'Makes pictures nicer',
          author: 'Ada Lovelace',
          license: 'LICENSE',
          repository: 'https://git.example.org/ada/my-node',
          icon: 'https://example.org/icon.png',
          banner_url: 'https://example.org/banner.png',
          tags: ['image', 'upscale'],
          supported_os: ['linux', 'windows'],
          supported_accelerators: ['cuda'],
          supported_appui_version: '>=0.3.0',
          supported_appui_frontend_version: '>=1.2',
          preempted_app_node_names: ['OldNode'],
        },
        node_version: {
          version: '1.4.0-rc.2',
          changelog: 'Fixed things',
          dependencies: ['numpy>=1.26', 'pillow'],
          supported_os: ['linux', 'windows'],
          supported_accelerators: ['cuda'],
          supported_appui_version: '>=0.3.0',
          supported_appui_frontend_version: '>=1.2',
        },
      },
    });
  });

  it('takes [tool.nodereg] version over [project] version, and --publisher over [tool.nodereg] publisher', () => {
    const p = project(full.replace('display-name', 'version = "3.0.0-beta.1"\ndisplay-name'), {}, { publisher: 'other-pub' });
    expect(p.request?.version).toBe('3.0.0-beta.1');
    expect(p.request?.publisherId).toBe('other-pub');
  });

  it('defaults the display name to the id, and takes the first author by email when it has no name', () => {
    const p = project('[project]\nname = "n1"\nversion = "1"\nauthors = [{ email = "x@example.org" }]\n[tool.nodereg]\npublisher = "pub"\n');
    expect(p.request?.body.node).toEqual({ id: 'n1', name: 'n1', author: 'x@example.org' });
  });

  it.each([
    ['Repository', 'Source', 'Homepage', 'https://r'],
    ['repository', 'source', 'homepage', 'https://r'],
    ['Bug Tracker', 'Source', 'Homepage', 'https://s'],
    ['Bug Tracker', 'Docs', 'Homepage', 'https://h'],
  ])('repository from [project.urls] %s / %s / %s', (a, b, c, expected) => {
    const toml = `[project]\nname = "n"\nversion = "1"\n[project.urls]\n"${c}" = "https://h"\n"${b}" = "https://s"\n"${a}" = "https://r"\n[tool.nodereg]\npublisher = "pub"\n`;
    expect(project(toml).request?.body.node.repository).toBe(expected);
  });

  describe('license', () => {
    const base = '[project]\nname = "n"\nversion = "1"\n[tool.nodereg]\npublisher = "pub"\n';
    const withLicense = (line: string) => base.replace('version = "1"', `version = "1"\n${line}`);
    it('{file = …} gives that path', () => {
      expect(project(withLicense('license = { file = "docs/LICENSE.txt" }'), { 'docs/LICENSE.txt': 'x' }).request?.body.node.license).toBe('docs/LICENSE.txt');
    });
    it('{file = …} must be a file that is packed', () => {
      expect(problems(project(withLicense('license = { file = "LICENSE" }')))).toEqual(['[project] license: file "LICENSE" is not in the archive (it does not exist or is ignored)']);
    });
    it('an SPDX string gives the file named by license-files', () => {
      const p = project(withLicense('license = "Apache-2.0"\nlicense-files = ["LICEN[CS]E*", "NOTICE"]'), { 'LICENCE.md': 'x', 'COPYING': 'y' });
      expect(p.request?.body.node.license).toBe('LICENCE.md');
    });
    it('license-files that match nothing is a problem', () => {
      expect(problems(project(withLicense('license = "MIT"\nlicense-files = ["LICENSES/*"]')))).toEqual(['[project] license-files: "LICENSES/*" matches no file in the archive']);
    });
    it('an SPDX string gives a root LICENSE*/COPYING* file when there is one', () => {
      expect(project(withLicense('license = "GPL-3.0-only"'), { COPYING: 'x', 'sub/LICENSE': 'y' }).request?.body.node.license).toBe('COPYING');
    });
    it('an SPDX string stays a string when there is no license file', () => {
      expect(project(withLicense('license = "MIT"'), { 'sub/LICENSE': 'y' }).request?.body.node.license).toBe('MIT');
    });
  });
});

describe('problems name the key to fix, all at once', () => {
  it('reports a missing pyproject.toml with the command that creates one', () => {
    const dir = writeTree(tempDir(), { 'a.py': '' });
    expect(problems(loadProject(dir, { requirePublisher: true }))).toEqual([`pyproject.toml: not found in ${dir}; create one with \`nodereg init\``]);
  });

  it('reports TOML syntax errors with their line', () => {
    expect(problems(project('[project]\nname = "x\n'))[0]).toMatch(/^pyproject\.toml: is not valid TOML \(line 2, column \d+\)/);
  });

  it('reports every problem of a bad manifest at once', () => {
    const p = project(`
[project]
name = "-bad-"
version = "1.0.post2"
description = "${'d'.repeat(1001)}"
authors = "me"
license = 42
dependencies = "numpy"
[project.urls]
Homepage = 7
[tool.nodereg]
publisher = "Bad_Publisher"
display-name = "${'n'.repeat(201)}"
tags = "one"
supported-os = [1]
includes = ["missing-dir"]
excludes = "x"
`);
    expect(p.request).toBeUndefined();
    expect(problems(p).sort()).toEqual([
      '[project.urls] Homepage: must be text, such as "example"',
      '[project] authors: must be an array of tables such as [{ name = "Ada" }]',
      '[project] dependencies: must be a list, such as ["first", "second"]',
      '[project] description: must be at most 1,000 characters long',
      '[project] license: must be an SPDX expression such as "MIT", or a table such as { file = "LICENSE" }',
      '[project] name: must be letters, digits, ".", "_" or "-", starting and ending with a letter or digit',
      '[project] version: "1.0.post2" is a post-release, which a registry version cannot express: publish the next patch version instead (e.g. "1.0.1")',
      '[tool.nodereg] display-name: must be at most 200 characters long',
      '[tool.nodereg] excludes: must be an array of strings',
      '[tool.nodereg] includes: "missing-dir" matches nothing in the project (it does not exist, or .noderegignore, excludes or the always-excluded names leave it out)',
      '[tool.nodereg] publisher: must be 2–64 characters: lowercase letters, digits or "-", starting with a letter',
      '[tool.nodereg] supported-os: must be text, such as "example" (item 1)',
      '[tool.nodereg] tags: must be a list, such as ["first", "second"]',
    ]);
  });

  it('names what is missing', () => {
    expect(problems(project('[project]\ndescription = "x"\n'))).toEqual([
      '[tool.nodereg] publisher: is missing: add publisher = "your-publisher-id" under [tool.nodereg], or pass --publisher',
      '[project] name: is missing: add name = "my-node" under [project]',
      '[project] version: is missing: add version = "1.2.3" under [project]',
    ]);
  });

  it('a dynamic version needs [tool.nodereg] version', () => {
    const toml = '[project]\nname = "n"\ndynamic = ["version"]\n[tool.nodereg]\npublisher = "pub"\n';
    expect(problems(project(toml))).toEqual(['[project] version: is dynamic, so nodereg cannot know it: add version = "1.2.3" under [tool.nodereg]']);
    expect(project(toml.replace('publisher', 'version = "0.2.0"\npublisher')).request?.version).toBe('0.2.0');
  });

  it('pack needs no publisher', () => {
    expect(project('[project]\nname = "n"\nversion = "1"\n', {}, { requirePublisher: false }).problems).toEqual([]);
  });

  it('names the flag a bad --publisher or changelog came from', () => {
    const p = project('[project]\nname = "n"\nversion = "1"\n', {}, { publisher: 'X', changelog: { text: 'c'.repeat(100_001), source: '--changelog-file notes.md' } });
    expect(problems(p)).toEqual([
      '--publisher: must be 2–64 characters: lowercase letters, digits or "-", starting with a letter',
      '--changelog-file notes.md: must be at most 100,000 characters long',
    ]);
  });

  it('warns about keys it does not know, suggesting the right one', () => {
    const p = project('[project]\nname = "n"\nversion = "1"\n[tool.nodereg]\npublisher = "pub"\ndisplay_name = "x"\ncolour = "red"\n');
    expect(p.problems).toEqual([]);
    expect(p.warnings).toEqual([
      '[tool.nodereg] display_name is not a key nodereg knows (did you mean display-name?); it is ignored',
      '[tool.nodereg] colour is not a key nodereg knows; it is ignored',
    ]);
  });

  it('reports a project with nothing to pack', () => {
    const dir = writeTree(tempDir(), { 'pyproject.toml': '[project]\nname = "n"\nversion = "1"\n[tool.nodereg]\nexcludes = ["*"]\n' });
    expect(problems(loadProject(dir))).toEqual(['files: nothing to pack: every file is ignored (check .gitignore, .noderegignore and excludes)']);
  });
});
