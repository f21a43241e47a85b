// pyproject.toml → publish request (DESIGN.md §6): the mapping table, the version conversions and
// their errors, and problems named by the key to fix, all of them at once.
import { execFileSync } from 'node:child_process';
import { rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pep440ToSemver, versionToSemver } from '../../src/package/manifest.js';
import { loadProject } from '../../src/package/project.js';
import { tempDir } from '../helpers.js';
import { writeTree } from './fixtures.js';

async function project(
  pyproject: string,
  extra: Record<string, string> = {},
  options: Parameters<typeof loadProject>[1] = {},
) {
  const dir = writeTree(tempDir(), { 'pyproject.toml': pyproject, 'node.py': 'print(1)\n', ...extra });
  return loadProject(dir, { requirePublisher: true, ...options });
}

const problems = (p: Awaited<ReturnType<typeof project>>) => p.problems.map((x) => `${x.key}: ${x.message}`);

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
    ['1.2.3.4', /4 release numbers.*three \(X\.Y\.Z\)/],
    // never a lower version than the one written (1.0.0 may be published already), nor a semver pre-release of it (1.0.0-1 < 1.0.0)
    [
      '1.0.0.1',
      /^"1\.0\.0\.1" has 4 release numbers; a registry version has three \(X\.Y\.Z\): write "1\.0\.1" \(the next patch version: "1\.0\.0" would be lower, and may be published already\)$/,
    ],
    ['2.3.9.1.5', /write "2\.3\.10" \(the next patch version/],
    ['1.0.0.1rc2', /write "1\.0\.1rc2" \(the next patch version/],
    ['1.2.3.0', /write "1\.2\.3"$/],
    ['latest', /"latest" is not a version: write X\.Y\.Z/],
    ['', /is not a version/],
  ])('%j is an error that says what to write', (pep440, message) => {
    const result = pep440ToSemver(pep440);
    expect('error' in result && result.error).toMatch(message);
  });

  it('a manifest version is taken as it is when it is semver (as the incumbent sends it; so "1.0.0-1" is a pre-release), else read as PEP 440', () => {
    expect(versionToSemver('1.0.0-1')).toEqual({ version: '1.0.0-1' });
    expect(pep440ToSemver('1.0.0-1')).toMatchObject({ error: expect.stringMatching(/post-release/) });
    expect(versionToSemver('v2.0.0-dev.3')).toEqual({ version: '2.0.0-dev.3' });
    expect(versionToSemver('2.1')).toEqual({ version: '2.1.0' });
    // PEP 440 would make these 1.0.0-alpha.0 and an error; the incumbent publishes them as written
    expect(versionToSemver('1.0.0-alpha')).toEqual({ version: '1.0.0-alpha' });
    expect(versionToSemver('1.0.0-SNAPSHOT')).toEqual({ version: '1.0.0-SNAPSHOT' });
    expect(versionToSemver('1.0a1')).toEqual({ version: '1.0.0-alpha.1' });
    expect(versionToSemver('1.2.3.post1')).toMatchObject({ error: expect.stringMatching(/post-release/) });
  });

  it('[project] version "1.0.0-alpha" publishes as written', async () => {
    const p = await project('[project]\nname = "n"\nversion = "1.0.0-alpha"\n[tool.nodereg]\npublisher = "pub"\n');
    expect(problems(p)).toEqual([]);
    expect(p.request?.version).toBe('1.0.0-alpha');
  });

  it('drops build metadata and PEP 440 local versions with a note, as the registry does', () => {
    expect(versionToSemver('1.2.3+build.5')).toEqual({
      version: '1.2.3',
      note: expect.stringMatching(/"\+build\.5" is dropped and 1\.2\.3 is published/),
    });
    expect(pep440ToSemver('1.2+cu121')).toEqual({
      version: '1.2.0',
      note: expect.stringMatching(/"\+cu121" is dropped and 1\.2\.0 is published/),
    });
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

  it('maps every key to its request field', async () => {
    const p = await project(full, { LICENSE: 'MIT…' }, { changelog: { text: 'Fixed things', source: '--changelog' } });
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

  it('takes [tool.nodereg] version over [project] version, and --publisher over [tool.nodereg] publisher', async () => {
    const p = await project(
      full.replace('display-name', 'version = "3.0.0-beta.1"\ndisplay-name'),
      {},
      { publisher: 'other-pub' },
    );
    expect(p.request?.version).toBe('3.0.0-beta.1');
    expect(p.request?.publisherId).toBe('other-pub');
  });

  it('sends no display name the manifest does not set (the registry names a new node after its id), and takes the first author by email when it has no name', async () => {
    const p = await project(
      '[project]\nname = "n1"\nversion = "1"\nauthors = [{ email = "x@example.org" }]\n[tool.nodereg]\npublisher = "pub"\n',
    );
    expect(p.request?.body.node).toEqual({ id: 'n1', author: 'x@example.org' });
  });

  it.each([
    ['Repository', 'Source', 'Homepage', 'https://r'],
    ['repository', 'source', 'homepage', 'https://r'],
    ['Bug Tracker', 'Source', 'Homepage', 'https://s'],
    ['Bug Tracker', 'Docs', 'Homepage', 'https://h'],
  ])('repository from [project.urls] %s / %s / %s', async (a, b, c, expected) => {
    const toml = `[project]\nname = "n"\nversion = "1"\n[project.urls]\n"${c}" = "https://h"\n"${b}" = "https://s"\n"${a}" = "https://r"\n[tool.nodereg]\npublisher = "pub"\n`;
    expect((await project(toml)).request?.body.node.repository).toBe(expected);
  });

  describe('license', () => {
    const base = '[project]\nname = "n"\nversion = "1"\n[tool.nodereg]\npublisher = "pub"\n';
    const withLicense = (line: string) => base.replace('version = "1"', `version = "1"\n${line}`);
    it('{file = …} gives that path', async () => {
      expect(
        (await project(withLicense('license = { file = "docs/LICENSE.txt" }'), { 'docs/LICENSE.txt': 'x' })).request
          ?.body.node.license,
      ).toBe('docs/LICENSE.txt');
    });
    it('{file = …} that is not packed gives the path with a warning (the incumbent client publishes it; its `node init` writes it)', async () => {
      const p = await project(withLicense('license = { file = "LICENSE" }'));
      expect(problems(p)).toEqual([]);
      expect(p.request?.body.node.license).toBe('LICENSE');
      expect(p.warnings).toContain(
        '[project] license: file "LICENSE" is not in the archive (it does not exist or is ignored); the registry will name a license file that users cannot read (add the file, or write an SPDX expression such as license = "MIT")',
      );
    });
    it('an SPDX string gives the file named by license-files', async () => {
      const p = await project(withLicense('license = "Apache-2.0"\nlicense-files = ["LICEN[CS]E*", "NOTICE"]'), {
        'LICENCE.md': 'x',
        COPYING: 'y',
      });
      expect(p.request?.body.node.license).toBe('LICENCE.md');
    });
    it('license-files that match nothing is a problem', async () => {
      expect(problems(await project(withLicense('license = "MIT"\nlicense-files = ["LICENSES/*"]')))).toEqual([
        '[project] license-files: "LICENSES/*" matches no file in the archive',
      ]);
    });
    it('an SPDX string gives a root LICENSE*/COPYING* file when there is one', async () => {
      expect(
        (await project(withLicense('license = "GPL-3.0-only"'), { COPYING: 'x', 'sub/LICENSE': 'y' })).request?.body
          .node.license,
      ).toBe('COPYING');
    });
    it('an SPDX string stays a string when there is no license file', async () => {
      expect((await project(withLicense('license = "MIT"'), { 'sub/LICENSE': 'y' })).request?.body.node.license).toBe(
        'MIT',
      );
    });
    it('none set is a warning naming the key and what to write (the root LICENSE file when there is one), and nothing is sent', async () => {
      const withFile = await project(base, { LICENSE: 'MIT License\n' });
      expect(problems(withFile)).toEqual([]);
      expect(withFile.request?.body.node).not.toHaveProperty('license');
      expect(withFile.warnings).toContain(
        '[project] license is not set: a new node is published without a license (a published one keeps its own); add license = { file = "LICENSE" } (the file is in the archive) to [project]',
      );
      expect((await project(base)).warnings).toContainEqual(
        expect.stringMatching(
          /^\[project\] license is not set: .*; add license = "MIT" \(your license's SPDX expression\) or license = \{ file = "LICENSE" \} to \[project\]$/,
        ),
      );
      // a license that is set, or a broken one (already a problem), adds no such warning
      expect(
        (await project(withLicense('license = "MIT"'))).warnings.filter((w) => w.includes('license is not set')),
      ).toEqual([]);
      expect(
        (await project(withLicense('license = 3'))).warnings.filter((w) => w.includes('license is not set')),
      ).toEqual([]);
    });
  });

  describe('description', () => {
    it('missing or blank (`comfy node init` writes description = "") is a warning naming the key', async () => {
      const base = '[project]\nname = "n"\nversion = "1"\nlicense = "MIT"\n[tool.nodereg]\npublisher = "pub"\n';
      const missing = await project(base);
      expect(problems(missing)).toEqual([]);
      expect(missing.warnings).toContain(
        '[project] description is not set: a new node has no description in search and on its page (a published one keeps its own); add description = "what the node does" to [project]',
      );
      const blank = await project(base.replace('version = "1"', 'version = "1"\ndescription = " "'));
      expect(blank.warnings).toContain(
        '[project] description is empty: the node shows no description in search and on its page; add description = "what the node does" to [project]',
      );
      const given = await project(base.replace('version = "1"', 'version = "1"\ndescription = "Relights portraits"'));
      expect(given.warnings.filter((w) => w.includes('description'))).toEqual([]);
    });
  });
});

describe('problems name the key to fix, all at once', () => {
  it('reports a missing pyproject.toml with the command that creates one', async () => {
    const dir = writeTree(tempDir(), { 'a.py': '' });
    expect(problems(await loadProject(dir, { requirePublisher: true }))).toEqual([
      `pyproject.toml: not found in ${dir}; create one with \`nodereg init\``,
    ]);
  });

  it('a pyproject.toml saved as UTF-16 (with or without its byte order mark) says to save it as UTF-8, with no other warning', async () => {
    const text = '[project]\nname = "n"\nversion = "1"\n';
    for (const bytes of [
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]),
      Buffer.from(text, 'utf16le'),
      Buffer.from(text, 'utf16le').swap16(),
    ]) {
      const dir = writeTree(tempDir(), { 'pyproject.toml': bytes, LICENSE: 'x' });
      const p = await loadProject(dir, { requirePublisher: false });
      expect(problems(p)).toEqual(['pyproject.toml: is UTF-16 text, and TOML is UTF-8: save it again as UTF-8']);
      expect(p.warnings).toEqual([]);
    }
  });

  it('reports TOML syntax errors with their line', async () => {
    expect(problems(await project('[project]\nname = "x\n'))[0]).toMatch(
      /^pyproject\.toml: is not valid TOML \(line 2, column \d+\)/,
    );
  });

  it("reads a 64-bit integer anywhere (TOML allows them; Python reads them): in another tool's table it is no problem, in one of ours it is named", async () => {
    const head = '[project]\nname = "big-ints"\nversion = "1.0.0"\ndescription = "x"\n';
    expect(
      problems(
        await project(
          `${head}[tool.nodereg]\npublisher = "ada"\n[tool.other]\nseed = 9223372036854775807\nmin = -9223372036854775808\n`,
        ),
      ),
    ).toEqual([]);
    expect(
      problems(await project(`${head}[tool.nodereg]\npublisher = "ada"\nversion = 9223372036854775807\n`)),
    ).toEqual(['[tool.nodereg] version: must be a string such as "1.2.3"']);
  });

  it('reports every problem of a bad manifest at once', async () => {
    const p = await project(`
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
      '[tool.nodereg] publisher: must be 2–64 characters: lowercase letters, digits or "-", starting with a letter',
      '[tool.nodereg] supported-os: must be text, such as "example" (item 1)',
      '[tool.nodereg] tags: must be a list, such as ["first", "second"]',
    ]);
    expect(p.warnings).toContain(
      '[tool.nodereg] includes: "missing-dir" matches nothing in the project (it does not exist, is an empty directory, or .noderegignore, excludes or the always-excluded names leave it out)',
    );
  });

  it('names what is missing', async () => {
    expect(problems(await project('[project]\ndescription = "x"\n'))).toEqual([
      '[tool.nodereg] publisher: is missing: add publisher = "your-publisher-id" under [tool.nodereg] (or PublisherId under [tool.comfy]), or pass --publisher',
      '[project] name: is missing: add name = "my-node" under [project]',
      '[project] version: is missing: add version = "1.2.3" under [project]',
    ]);
  });

  it('a dynamic version needs [tool.nodereg] version', async () => {
    const toml = '[project]\nname = "n"\ndynamic = ["version"]\n[tool.nodereg]\npublisher = "pub"\n';
    expect(problems(await project(toml))).toEqual([
      '[project] version: is dynamic, so nodereg cannot know it: add version = "1.2.3" under [tool.nodereg]',
    ]);
    expect((await project(toml.replace('publisher', 'version = "0.2.0"\npublisher'))).request?.version).toBe('0.2.0');
  });

  it('pack needs no publisher', async () => {
    expect((await project('[project]\nname = "n"\nversion = "1"\n', {}, { requirePublisher: false })).problems).toEqual(
      [],
    );
  });

  it('names the flag a bad --publisher or changelog came from', async () => {
    const p = await project(
      '[project]\nname = "n"\nversion = "1"\n',
      {},
      { publisher: 'X', changelog: { text: 'c'.repeat(100_001), source: '--changelog-file notes.md' } },
    );
    expect(problems(p)).toEqual([
      '--publisher: must be 2–64 characters: lowercase letters, digits or "-", starting with a letter',
      '--changelog-file notes.md: must be at most 100,000 characters long',
    ]);
  });

  it('warns about keys it does not know, suggesting the right one', async () => {
    const p = await project(
      '[project]\nname = "n"\nversion = "1"\ndescription = "d"\nlicense = "MIT"\n[tool.nodereg]\npublisher = "pub"\ndisplay_name = "x"\ncolour = "red"\n',
    );
    expect(p.problems).toEqual([]);
    expect(p.warnings).toEqual([
      '[tool.nodereg] display_name is not a key nodereg knows (did you mean display-name?); it is ignored',
      '[tool.nodereg] colour is not a key nodereg knows; it is ignored',
    ]);
  });

  it('words a TOML integer past the safe range and a TOML date where text goes, as any value refused', async () => {
    const p = await project(
      '[project]\nname = "n"\nversion = "1.0.0"\n[tool.nodereg]\npublisher = "ada"\ntags = [99999999999999999999]\nicon = 1979-05-27T07:32:00Z\n',
    );
    expect(problems(p).sort()).toEqual([
      '[tool.nodereg] icon: must be an absolute http:// or https:// URL, such as https://example.com/page (or "" for none)',
      '[tool.nodereg] tags: must be text, such as "example" (item 1)',
    ]);
  });

  it('reports a project with nothing to pack', async () => {
    const dir = writeTree(tempDir(), {
      'pyproject.toml': '[project]\nname = "n"\nversion = "1"\n[tool.nodereg]\nexcludes = ["*"]\n',
    });
    expect(problems(await loadProject(dir))).toEqual([
      'files: nothing to pack: every file is ignored (check .gitignore, .noderegignore, .comfyignore and excludes)',
    ]);
  });
});

describe("the incumbent's [tool.comfy] table and classifiers, read where [tool.nodereg] is silent", () => {
  const comfyOnly = `
[project]
name = "comfyui-relight"
version = "1.0"
dependencies = ["numpy", "ComfyUI_Frontend_Package>=1.2.0"]
classifiers = [
  "License :: OSI Approved :: MIT License",
  "Operating System :: OS Independent",
  "Operating System :: POSIX :: Linux",
  "Operating System :: Plan 9",
  "Environment :: GPU :: NVIDIA CUDA",
  "Environment :: NPU :: Huawei Ascend",
  "Environment :: GPU :: Voodoo",
  "Environment :: Console",
]

[tool.comfy]
PublisherId = "ada"
DisplayName = "Relight"
Icon = "https://example.org/icon.png"
Banner = "https://example.org/banner.png"
includes = ["web/dist"]
requires-comfyui = ">=0.3.0"
`;

  it('maps PublisherId, DisplayName, Icon, Banner, includes, requires-comfyui, the frontend dependency and the classifiers', async () => {
    const p = await project(comfyOnly, { 'web/dist/app.js': '' });
    expect(p.problems).toEqual([]);
    expect(p.request?.publisherId).toBe('ada');
    expect(p.request?.body).toEqual({
      node: {
        id: 'comfyui-relight',
        name: 'Relight',
        icon: 'https://example.org/icon.png',
        banner_url: 'https://example.org/banner.png',
        supported_os: ['OS Independent', 'POSIX :: Linux'],
        supported_accelerators: ['GPU :: NVIDIA CUDA', 'NPU :: Huawei Ascend'],
        supported_appui_version: '>=0.3.0',
        supported_appui_frontend_version: '>=1.2.0',
      },
      node_version: {
        version: '1.0.0',
        dependencies: ['numpy'],
        supported_os: ['OS Independent', 'POSIX :: Linux'],
        supported_accelerators: ['GPU :: NVIDIA CUDA', 'NPU :: Huawei Ascend'],
        supported_appui_version: '>=0.3.0',
        supported_appui_frontend_version: '>=1.2.0',
      },
    });
    expect(p.manifest.includes).toEqual(['web/dist']);
    expect(p.manifest.keys.has('node.license')).toBe(false); // validate names no key for a field it did not read
    expect(Object.fromEntries(p.manifest.keys)).toMatchObject({
      publisher: '[tool.comfy] PublisherId',
      'node.name': '[tool.comfy] DisplayName',
      'node.icon': '[tool.comfy] Icon',
      'node.banner_url': '[tool.comfy] Banner',
      includes: '[tool.comfy] includes',
      'node.supported_appui_version': '[tool.comfy] requires-comfyui',
      'node.supported_os': '[project] classifiers',
      'node.supported_appui_frontend_version': '[project] dependencies (ComfyUI_Frontend_Package>=1.2.0)',
    });
    // Only the bad entries go, each with a warning; the incumbent would drop the whole list.
    expect(p.warnings.filter((w) => w.includes('classifiers'))).toEqual([
      expect.stringMatching(
        /^\[project\] classifiers "Operating System :: Plan 9" names no operating system the registry knows .* left out of supported_os$/,
      ),
      expect.stringMatching(
        /^\[project\] classifiers "Environment :: GPU :: Voodoo" names no accelerator the registry knows .* left out of supported_accelerators$/,
      ),
    ]);
  });

  it('sends a requires-comfyui the incumbent would send, and ours (requires-app) as a semver range', async () => {
    for (const value of ['>=0.3.0, <0.4.0', '==2.1.0-beta', '1.5.2', '~=0.3.0']) {
      const p = await project(comfyOnly.replace('">=0.3.0"', `"${value}"`), { 'web/dist/app.js': '' });
      expect(p.warnings.filter((w) => w.includes('requires-comfyui'))).toEqual([]);
      expect(p.request?.body.node.supported_appui_version).toBe(value);
    }
    const ours = await project(
      `${comfyOnly.replace('">=0.3.0"', '"0.3.x"')}\n[tool.nodereg]\nrequires-app = ">=v0.3.0"\n`,
      { 'web/dist/app.js': '' },
    );
    expect(ours.warnings.filter((w) => w.includes('requires'))).toEqual([]);
    expect(ours.request?.body.node.supported_appui_version).toBe('>=v0.3.0');
  });

  it('checks a comfyui-frontend-package requirement as requires-comfyui is checked: one the registry cannot use is not sent, with a warning', async () => {
    for (const value of ['>=1.2.0, <2.0.0', '==1.5.2', '~=1.2.0']) {
      const p = await project(
        comfyOnly.replace('ComfyUI_Frontend_Package>=1.2.0', `ComfyUI_Frontend_Package${value}`),
        { 'web/dist/app.js': '' },
      );
      expect(p.warnings.filter((w) => w.includes('Frontend'))).toEqual([]);
      expect(p.request?.body.node.supported_appui_frontend_version).toBe(value);
    }
    const odd = await project(
      comfyOnly.replace('ComfyUI_Frontend_Package>=1.2.0', 'ComfyUI_Frontend_Package>=latest'),
      { 'web/dist/app.js': '' },
    );
    expect(odd.problems).toEqual([]);
    expect(odd.warnings).toContain(
      '[project] dependencies (ComfyUI_Frontend_Package>=latest) ">=latest" is not a version requirement the registry can use (an operator and an X.Y.Z version, parts separated by commas: ">=0.3.0", ">=0.3.0, <0.4.0"); it is not sent, as the incumbent client sends none',
    );
    expect(odd.request?.body.node.supported_appui_frontend_version).toBeUndefined();
    expect(odd.request?.body.node_version.supported_appui_frontend_version).toBeUndefined();
  });

  it('lets [tool.nodereg] win key by key, and --publisher over both', async () => {
    const both = `${comfyOnly}\n[tool.nodereg]\npublisher = "bob"\ndisplay-name = "Ours"\nsupported-os = ["linux"]\nrequires-app-frontend = ">=2"\nincludes = []\n`;
    const p = await project(both);
    expect(p.request?.publisherId).toBe('bob');
    expect(p.request?.body.node).toMatchObject({
      name: 'Ours',
      icon: 'https://example.org/icon.png',
      supported_os: ['linux'],
      supported_appui_frontend_version: '>=2',
    });
    // With requires-app-frontend set, the frontend dependency stays a dependency.
    expect(p.request?.body.node_version.dependencies).toEqual(['numpy', 'ComfyUI_Frontend_Package>=1.2.0']);
    expect(p.manifest.includes).toEqual([]);
    expect((await project(both, {}, { publisher: 'carol' })).request?.publisherId).toBe('carol');
  });

  it('reads a dynamic version from the file [tool.comfy.version] names, as text', async () => {
    const toml =
      '[project]\nname = "n"\ndynamic = ["version"]\n[tool.comfy]\nPublisherId = "ada"\n[tool.comfy.version]\npath = "n/version.py"\n';
    const p = await project(toml, {
      'n/version.py': '"""Version."""\n# __version__ = "0.0.1"\n__version__: str = "2.1rc1"\n',
    });
    expect(p.problems).toEqual([]);
    expect(p.request?.version).toBe('2.1.0-rc.1');
    expect(p.manifest.keys.get('node_version.version')).toBe('[tool.comfy.version] path');
    expect(problems(await project(toml, { 'n/version.py': 'print(1)\n' }))).toEqual([
      '[tool.comfy.version] path: "n/version.py" has no line such as __version__ = "1.2.3"',
    ]);
    expect(problems(await project(toml.replace('n/version.py', '../outside.py')))).toEqual([
      '[tool.comfy.version] path: "../outside.py" must be a path inside the project',
    ]);
    // [tool.nodereg] version still wins.
    expect(
      (await project(`${toml}[tool.nodereg]\nversion = "3.0.0"\n`, { 'n/version.py': '__version__ = "1"\n' })).request
        ?.version,
    ).toBe('3.0.0');
  });

  it.each([
    ["'.'.join(map(str, VERSION))", "VERSION = (1, 2, 3)\n__version__ = '.'.join(map(str, VERSION))\n"],
    ['f"{MAJOR}.{MINOR}.0"', 'MAJOR, MINOR = 1, 2\n__version__ = f"{MAJOR}.{MINOR}.0"\n'],
    ['"1.2" + ".3"', '__version__ = "1.2" + ".3"\n'],
    ['"1.2.3", "beta"  # a tuple', '__version__ = "1.2.3", "beta"  # a tuple\n'],
    ['importlib.metadata.version("n")', 'import importlib.metadata\n__version__ = importlib.metadata.version("n")\n'],
    ['"""1.2.3"""', '__version__ = """1.2.3"""\n'],
    ['"1.2.3" if RELEASE else "0.0.0"', 'RELEASE = True\n__version__ = "1.2.3" if RELEASE else "0.0.0"\n'],
  ])(
    'a version file that sets __version__ = %s (not a plain string) is a problem naming the file and the key',
    async (value, source) => {
      const toml =
        '[project]\nname = "n"\ndynamic = ["version"]\n[tool.comfy]\nPublisherId = "ada"\n[tool.comfy.version]\npath = "n/version.py"\n';
      const p = await project(toml, { 'n/version.py': source });
      expect(problems(p)).toEqual([
        `[tool.comfy.version] path: "n/version.py" sets __version__ = ${value}, not a plain string: the file is read as text, never run; write __version__ = "1.2.3" there, or set version under [tool.nodereg]`,
      ]);
      expect(p.request).toBeUndefined();
    },
  );

  it('a version file: a plain string with a comment, in either quotes, with CRLF line ends, is read; __version__ wins over an earlier VERSION', async () => {
    const toml =
      '[project]\nname = "n"\ndynamic = ["version"]\n[tool.comfy]\nPublisherId = "ada"\n[tool.comfy.version]\npath = "v.py"\n';
    for (const [source, version] of [
      ["__version__ = '1.4.0'  # bumped by CI\n", '1.4.0'],
      ['# header\r\n__version__ = "2.0"\r\n', '2.0.0'],
      ['VERSION = (1, 2, 3)\n__version__ = "1.2.3"\n', '1.2.3'],
      ['VERSION = "0.9"\n', '0.9.0'],
    ]) {
      const p = await project(toml, { 'v.py': source });
      expect(p.problems).toEqual([]);
      expect(p.request?.version).toBe(version);
    }
  });

  it('reads the [tool.comfy.version] file only when it is a small regular file inside the project: not a FIFO (the read would block forever), a symlink out, or a huge file', async () => {
    const toml =
      '[project]\nname = "n"\ndynamic = ["version"]\n[tool.comfy]\nPublisherId = "ada"\n[tool.comfy.version]\npath = "v.py"\n';
    const outside = join(tempDir(), 'secret.py');
    writeFileSync(outside, '__version__ = "6.6.6"\n');
    const dir = writeTree(tempDir(), { 'pyproject.toml': toml, 'node.py': 'x = 1\n' });
    const check = async () => problems(await loadProject(dir, { requirePublisher: true }));
    execFileSync('mkfifo', [join(dir, 'v.py')]);
    expect(await check()).toEqual(['[tool.comfy.version] path: "v.py" is not a regular file']);
    rmSync(join(dir, 'v.py'));
    symlinkSync(outside, join(dir, 'v.py'));
    expect(await check()).toEqual(['[tool.comfy.version] path: "v.py" is a symlink that leads out of the project']);
    rmSync(join(dir, 'v.py'));
    writeFileSync(join(dir, 'v.py'), '');
    truncateSync(join(dir, 'v.py'), 3 * 1024 ** 3); // sparse
    expect(await check()).toEqual([
      '[tool.comfy.version] path: "v.py" is 3.0 GiB; a file that sets __version__ is a few lines',
    ]);
  });

  it('reads "" in [tool.comfy] as unset, as the incumbent does, and names [tool.comfy] keys in problems', async () => {
    const p = await project(
      '[project]\nname = "n"\nversion = "1"\n[tool.comfy]\nPublisherId = ""\nIcon = ""\nDisplayName = 7\nincludes = ["missing"]\n',
    );
    expect(problems(p)).toEqual([
      '[tool.comfy] PublisherId: is empty: set it to your publisher id (PublisherId = "your-publisher-id"), or pass --publisher',
      '[tool.comfy] DisplayName: must be text, such as "example"',
    ]);
    expect(p.warnings).toContainEqual(expect.stringMatching(/^\[tool\.comfy\] includes: "missing" matches nothing/));
  });
});
