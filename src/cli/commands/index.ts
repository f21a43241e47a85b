import type { CommandEntry } from './entry.js';

export type { CommandEntry, CommandModule } from './entry.js';

// One line per command; its file under commands/ registers the options and the action.
export const commands: CommandEntry[] = [
  { name: 'config', summary: 'get, set or list profile settings (registry, token)', load: () => import('./config.js') },
  { name: 'openapi', summary: 'print the OpenAPI document of the registry', load: () => import('./openapi.js') },
  { name: 'node', summary: 'show, search, download and update nodes', load: () => import('./node.js') },
  {
    name: 'publisher',
    summary: 'create, show and update publishers, and manage their members',
    load: () => import('./publisher.js'),
  },
  {
    name: 'version',
    summary: "update a version's changelog, deprecation or status",
    load: () => import('./version.js'),
  },
  { name: 'review', summary: 'rate a node with 1 to 5 stars', load: () => import('./review.js') },
  {
    name: 'admin',
    summary: 'operate a registry: review Flagged versions, release claims, collect archives (admins only)',
    load: () => import('./admin.js'),
  },
  { name: 'token', summary: 'create, list and revoke access tokens', load: () => import('./token.js') },
  { name: 'user', summary: 'create users (admins only)', load: () => import('./user.js') },
  { name: 'login', summary: 'check a token and save it into a profile', load: () => import('./login.js') },
  { name: 'logout', summary: "forget the profile's saved token", load: () => import('./logout.js') },
  { name: 'whoami', summary: 'show whom the token belongs to', load: () => import('./whoami.js') },
  {
    name: 'completion',
    summary: 'print a shell completion script (bash, zsh, fish)',
    load: () => import('./completion.js'),
  },
  { name: 'relight', summary: 'relight an image through the AI proxy', load: () => import('./relight.js') },
  {
    name: 'skin-enhance',
    summary: 'enhance the skin in an image through the AI proxy',
    load: () => import('./skin-enhance.js'),
  },
  { name: 'video-extend', summary: 'extend a video through the AI proxy', load: () => import('./video-extend.js') },
  { name: 'task', summary: 'status and results of AI proxy tasks', load: () => import('./task.js') },
  { name: 'serve', summary: 'run the embedded registry (SQLite and local archives)', load: () => import('./serve.js') },
  {
    name: 'publish',
    summary: 'validate, pack and publish the node in a directory, then upload its archive',
    load: () => import('./publish.js'),
  },
  { name: 'pack', summary: 'build the archive publish would upload, locally', load: () => import('./pack.js') },
  {
    name: 'scan',
    summary: 'scan the files pack would ship for risky code, offline; SARIF for code-scanning tools',
    load: () => import('./scan.js'),
  },
  {
    name: 'workflow',
    summary: 'list the packs a workflow needs, resolved against the registry',
    load: () => import('./workflow.js'),
  },
  {
    name: 'validate',
    summary: "check pyproject.toml, the file set and the registry's archive limits; every problem at once",
    load: () => import('./validate.js'),
  },
  {
    name: 'init',
    summary: 'create pyproject.toml, or add the [tool.nodereg] table to an existing one',
    load: () => import('./init.js'),
  },
  {
    name: 'backup',
    summary: 'copy a consistent snapshot of a registry data dir, also while it serves',
    load: () => import('./backup.js'),
  },
  {
    name: 'restore',
    summary: 'copy a registry data dir into PostgreSQL and S3, or into a new SQLite data dir',
    load: () => import('./restore.js'),
  },
  {
    name: 'verify',
    summary: "check a version's signed provenance and print the repository and commit it was built from",
    load: () => import('./verify.js'),
  },
  {
    name: 'mirror',
    summary: 'prefetch and inspect the cache of a registry that mirrors an upstream',
    load: () => import('./mirror.js'),
  },
];
