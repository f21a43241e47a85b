// Where `nodereg serve` takes each setting from: the flag, else its environment variable, else its key
// in the TOML file of --config (NODEREG_CONFIG), else the default. Every flag of the flag table is
// walked, so a new flag cannot miss its variable or key.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, type Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { addServeOptions } from '../../src/cli/serve/options.js';
import { CONFIG_FLAG, configKey, envName, layerSources, sourcedOptions } from '../../src/cli/serve/sources.js';
import { runInProcess } from '../cli/in-process.js';
import { tempDir } from '../helpers.js';
import { useServe } from './serve-helper.js';

const serve = useServe();

const serveCommand = () => addServeOptions(new Command('serve').exitOverride());
const FLAGS = sourcedOptions(serveCommand());

/** A value of each layer for `option`, as the file writes it, the variable and the command line give it, and as it comes out. */
function samples(option: Option) {
  if (option.isBoolean())
    return { file: 'true', fileValue: true, env: 'false', envValue: false, cli: [option.long!], cliValue: true };
  const choices = option.argChoices;
  if (choices) {
    const [a, b] = [choices[0]!, choices[1]!];
    return { file: `"${a}"`, fileValue: a, env: b, envValue: b, cli: [option.long!, a], cliValue: a };
  }
  if (option.variadic)
    return {
      file: '["f1", "f2"]',
      fileValue: ['f1', 'f2'],
      env: 'e1, e2',
      envValue: ['e1', 'e2'],
      cli: [option.long!, 'c'],
      cliValue: ['c'],
    };
  return {
    file: '"from-file"',
    fileValue: 'from-file',
    env: 'from-env',
    envValue: 'from-env',
    cli: [option.long!, 'from-cli'],
    cliValue: 'from-cli',
  };
}

/** The value and source of `option` after parsing `argv` and layering `env` and the config file. */
async function layered(option: Option, argv: string[], env: NodeJS.ProcessEnv) {
  const command = serveCommand();
  command.parse(argv, { from: 'user' });
  await layerSources(command, env);
  const key = option.attributeName();
  return { value: command.getOptionValue(key), source: command.getOptionValueSource(key) };
}

describe('serve settings: flag > environment variable > config file > default', () => {
  it('every flag has its own variable (NODEREG_*, PORT for --port), named in its help, and its own config key', () => {
    expect(FLAGS.length).toBeGreaterThan(30);
    const variables = FLAGS.map(envName);
    const keys = FLAGS.map(configKey).filter((key) => key !== undefined);
    expect(new Set(variables).size).toBe(FLAGS.length);
    expect(new Set(keys).size).toBe(FLAGS.length - 1); // --config has none
    for (const option of FLAGS) {
      expect(envName(option), option.long).toMatch(/^(NODEREG_[A-Z0-9_]+|PORT)$/);
      expect(option.description, option.long).toContain(envName(option));
      if (option.long !== CONFIG_FLAG) expect(configKey(option), option.long).toBe(option.long!.slice(2));
    }
    expect(envName(FLAGS.find((option) => option.long === '--port')!)).toBe('PORT');
    expect(envName(FLAGS.find((option) => option.long === '--max-archive')!)).toBe('NODEREG_MAX_ARCHIVE');
  });

  it.each(FLAGS.filter((option) => option.long !== CONFIG_FLAG).map((option) => [option.long!, option] as const))(
    '%s: the flag beats the variable, which beats the config file',
    async (_flag, option) => {
      const sample = samples(option);
      const file = join(tempDir(), 'serve.toml');
      writeFileSync(file, `${configKey(option)} = ${sample.file}\n`);
      const env = { [envName(option)]: sample.env, NODEREG_CONFIG: file };
      expect(await layered(option, sample.cli, env)).toEqual({ value: sample.cliValue, source: 'cli' });
      expect(await layered(option, [], env)).toEqual({ value: sample.envValue, source: 'env' });
      expect(await layered(option, [], { NODEREG_CONFIG: file })).toEqual({
        value: sample.fileValue,
        source: 'config',
      });
      expect(await layered(option, ['--config', file], {})).toEqual({ value: sample.fileValue, source: 'config' });
      const fallback = await layered(option, [], {});
      expect(fallback.source === undefined || fallback.source === 'default').toBe(true);
    },
  );

  it('a bad value names where it came from: the flag, else the variable, else the file and key (exit 2)', async () => {
    const file = join(tempDir(), 'serve.toml');
    writeFileSync(file, 'max-archive = "f-bad"\n');
    const env = { NODEREG_MAX_ARCHIVE: 'e-bad', NODEREG_CONFIG: file };
    const flag = await runInProcess(['serve', '--max-archive', 'c-bad'], { env });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--max-archive must be a size such as 200MiB, 500kB or 1048576 (got "c-bad")');
    const variable = await runInProcess(['serve'], { env });
    expect(variable.code).toBe(2);
    expect(variable.stderr).toContain(
      'NODEREG_MAX_ARCHIVE must be a size such as 200MiB, 500kB or 1048576 (got "e-bad")',
    );
    const fromFile = await runInProcess(['serve'], { env: { NODEREG_CONFIG: file } });
    expect(fromFile.code).toBe(2);
    expect(fromFile.stderr).toContain(
      `"max-archive" in ${file} must be a size such as 200MiB, 500kB or 1048576 (got "f-bad")`,
    );
  });

  it.each([
    ['NODEREG_REVIEW', 'sometimes', 'NODEREG_REVIEW must be one of auto, manual (got "sometimes")'],
    ['NODEREG_SEED', 'maybe', 'NODEREG_SEED must be true or false (got "maybe")'],
    ['PORT', 'http', 'PORT must be a port number from 0 to 65535 (got "http")'],
    ['NODEREG_UPSTREAM_PIN_DAYS', 'week', 'NODEREG_UPSTREAM_PIN_DAYS must be a whole number of days'],
    ['NODEREG_UPLOADS_PER_VERSION', 'many', 'NODEREG_UPLOADS_PER_VERSION must be a whole number from 1 (got "many")'],
    ['NODEREG_UPLOAD_MIN_RATE', 'fast', 'NODEREG_UPLOAD_MIN_RATE must be a size such as 200MiB'],
    ['NODEREG_UPLOAD_GRACE', '0.5s', 'NODEREG_UPLOAD_GRACE must be at least 1s (got "0.5s")'],
    [
      'NODEREG_CONFIG',
      '/nonexistent/serve.toml',
      'NODEREG_CONFIG: cannot read the config file /nonexistent/serve.toml: no such file',
    ],
  ])('%s=%s is refused before anything starts, naming the variable (exit 2)', async (variable, value, message) => {
    const env = { [variable]: value, NODEREG_UPSTREAM: 'https://upstream.example' };
    const run = await runInProcess(['serve', '--data-dir', tempDir()], { env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
  });

  it.each([
    ['prot = 4880', 'unknown key "prot"'],
    ['"--port" = 4880', 'unknown key "--port"; write it without the dashes: port'],
    ['[serve]\nport = 4880', 'unknown key "serve"'],
    ['port = true', '"port" must be a string (or a number) (got a boolean (true))'],
    ['seed = "yes"', '"seed" must be a boolean (true or false) (got a string (yes))'],
    ['upstream-allow = "a"', '"upstream-allow" must be an array of strings (got a string (a))'],
    ['log = "loud"', '"log" in FILE must be one of pretty, json, off (got "loud")'],
    ['port = ', 'FILE (--config) is not valid TOML'],
  ])(
    'a config file with %j is refused at start, naming the file, the key and the type (exit 2)',
    async (text, message) => {
      const file = join(tempDir(), 'serve.toml');
      writeFileSync(file, `${text}\n`);
      const run = await runInProcess(['serve', '--config', file, '--data-dir', tempDir()]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(file);
      expect(run.stderr).toContain(message.replace('FILE', file));
    },
  );

  it('a real start takes the port from PORT over the file, and the log format from the file', async () => {
    const dir = tempDir();
    const file = join(dir, 'serve.toml');
    writeFileSync(file, 'port = 1\nlog = "json"\nreview = "manual"\nseed = false\n');
    const served = await serve(['--data-dir', join(dir, 'data')], { env: { PORT: '0', NODEREG_CONFIG: file } });
    expect(served.stdout()).toMatch(/^\{.*"url":"http:\/\/127\.0\.0\.1:\d+"/);
    expect(new URL(served.url).port).not.toBe('1');
    expect((await served.stop()).code).toBe(0);
  });
});
