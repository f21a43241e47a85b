// latest_version as DESIGN.md §3 defines it, tested in-process on rows (the integration test in
// uploads.test.ts checks it through the API).
import { describe, expect, it } from 'vitest';
import type { VersionRow, VersionStatus } from '../../src/server/store/registry-store.js';
import { latestVersion } from '../../src/server/views.js';

const row = (version: string, status: VersionStatus = 'NodeVersionStatusActive', deprecated = false): VersionRow => ({
  id: version, node_id: 'n', version, deprecated, status, changelog: null, dependencies: null, supported_accelerators: null,
  supported_appui_frontend_version: null, supported_appui_version: null, supported_os: null, tags: null, tags_admin: null,
  status_reason: null, archive_sha256: 'x', archive_size: 1, uploaded_at: 'x', created_at: 'x', findings: null,
});
const latest = (rows: VersionRow[]) => latestVersion(rows)?.version;

describe('latestVersion', () => {
  it('is the highest Active, non-deprecated release, compared as semver', () => {
    expect(latest([row('1.2.0'), row('1.10.0'), row('1.9.9')])).toBe('1.10.0');
    expect(latest([row('2.0.0-rc.1'), row('1.10.0')])).toBe('1.10.0');
    expect(latest([row('3.0.0', 'NodeVersionStatusPending'), row('2.0.0', 'NodeVersionStatusBanned'), row('1.0.0')])).toBe('1.0.0');
    expect(latest([row('2.0.0', 'NodeVersionStatusActive', true), row('1.0.0')])).toBe('1.0.0');
  });

  it('falls back to the highest Active non-deprecated prerelease', () => {
    expect(latest([row('2.0.0-beta.2'), row('2.0.0-beta.10'), row('1.0.0', 'NodeVersionStatusActive', true)])).toBe('2.0.0-beta.10');
  });

  it('falls back to the highest Active, deprecated or not', () => {
    expect(latest([row('1.0.0', 'NodeVersionStatusActive', true), row('1.1.0-rc.1', 'NodeVersionStatusActive', true)])).toBe('1.1.0-rc.1');
  });

  it('is absent without an Active version', () => {
    expect(latest([])).toBeUndefined();
    expect(latest([row('1.0.0', 'NodeVersionStatusPending'), row('1.0.1', 'NodeVersionStatusFlagged'), row('1.0.2', 'NodeVersionStatusDeleted')])).toBeUndefined();
  });
});
