// An uploaded archive is committed by linking its temporary file into place (written once). The link, and every
// directory made on the way, is an entry of a directory: until that directory is fsynced, a power loss
// can take the archive away while the database already says the version is Active. Watched from
// outside: `nodereg serve` runs under strace, and the order of its system calls is read afterwards.
import { randomBytes } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect, it } from 'vitest';
import { tempDir, type TestServer } from '../../helpers.js';
import { createPublisher, createUser, makeZip, publish, uploadTo } from '../fixtures.js';
import { useServe } from '../serve-helper.js';

const serve = useServe();

it('fsyncs each new directory and the archive directory after the link, before the upload is answered', async () => {
  const dataDir = realpathSync(tempDir()); // strace names directories by their real path
  const adminToken = `nrg_u_admin${randomBytes(16).toString('hex')}`;
  const trace = join(tempDir(), 'trace');
  // -y prints the path behind each file descriptor; -s 15 is enough to tell an HTTP status line.
  const wrap = [
    'strace',
    '-f',
    '-y',
    '-s',
    '15',
    '-o',
    trace,
    '-e',
    'trace=mkdir,mkdirat,link,linkat,rename,renameat,renameat2,fsync,fdatasync,write,writev',
  ];
  const served = await serve(['--port', '0', '--data-dir', dataDir], {
    wrap,
    env: { NODEREG_ADMIN_TOKEN: adminToken },
  });
  const server = { url: served.url, adminToken } as TestServer;
  const node = Number(
    readFileSync(`/proc/${served.child.pid}/task/${served.child.pid}/children`, 'utf8').trim().split(' ')[0],
  );
  try {
    const owner = await createUser(server, 'durable');
    await createPublisher(server, owner, 'durable-co');
    const published = await publish(server, owner.token, 'durable-co', 'kept', '1.0.0');
    expect(published.status, published.text).toBe(201);
    const uploaded = await uploadTo(published.body.signedUrl, await makeZip());
    expect(uploaded.status, uploaded.text).toBe(200);
  } finally {
    process.kill(node, 'SIGTERM'); // strace ends with it, its trace written whole
    await served.exited;
  }

  // One call per line; a call cut by another thread's is joined with its "resumed" part.
  const lines = readFileSync(trace, 'utf8')
    .split('\n')
    .filter((line) => !line.includes(' resumed>'));
  const archives = join(dataDir, 'archives');
  const target = join(archives, 'durable-co', 'kept', '1.0.0', 'node.zip');
  const at = (test: (line: string) => boolean, from = 0) => lines.findIndex((line, i) => i >= from && test(line));
  // Archives are written once: linked into place (link never replaces a file), not renamed.
  const renamed = at((line) => /^\d+\s+(link|rename)/.test(line) && line.includes(`"${target}"`));
  const answered = at((line) => line.includes('"HTTP/1.1 200'), renamed);
  const synced = (dir: string, from: number) =>
    at((line) => /^\d+\s+f(data)?sync\(/.test(line) && line.includes(`<${dir}>`), from);
  expect(renamed, 'the archive was linked into place').toBeGreaterThan(-1);
  expect(answered, 'the upload was answered after the link').toBeGreaterThan(renamed);
  const afterRename = synced(dirname(target), renamed);
  expect(afterRename, 'the archive dir fsynced after the link').toBeGreaterThan(renamed);
  expect(afterRename, '… and before the answer').toBeLessThan(answered);
  // The publisher, node and version dirs were all new: each parent fsynced after its mkdir, before the answer.
  for (const made of [join(archives, 'durable-co'), join(archives, 'durable-co', 'kept'), dirname(target)]) {
    const mkdir = at((line) => /^\d+\s+mkdir/.test(line) && line.includes(`"${made}"`));
    expect(mkdir, `mkdir ${made}`).toBeGreaterThan(-1);
    const parent = synced(dirname(made), mkdir);
    expect(parent, `${dirname(made)} fsynced after mkdir ${made}`).toBeGreaterThan(mkdir);
    expect(parent).toBeLessThan(answered);
  }
}, 30_000);
