import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { ScanSeverity } from '../../contract/scan.js';
import type { Ctx } from '../context.js';
import { onNodes } from '../many-nodes.js';
import { allOption, type ManyFlags } from '../project-discovery.js';
import { EXIT, exitCodesHelp, fileProblem, invalidInput, ResultExit } from '../errors.js';
import { blocking, failOnOption, findingsText, scanProject } from '../findings.js';
import { examples } from '../examples.js';

interface Options {
  sarif?: string;
  cache: boolean;
  failOn: ScanSeverity;
  node?: string;
}

export function register(program: Command, ctx: Ctx): void {
  const command = program
    .command('scan [dirs...]')
    .description('scan the files pack would ship for risky code (eval, runtime installs, obfuscation, …)')
    .option('--sarif <file>', 'also write the findings as SARIF 2.1.0 (for code-scanning tools)')
    .option('--node <id>', 'also show which findings the registry (--registry) already approved for node ID')
    .option('--no-cache', "scan every file anew, neither reading nor writing the user's cache of earlier scans")
    .addOption(failOnOption(program))
    .addOption(allOption())
    .action((dirs: string[], options: Options & ManyFlags) =>
      onNodes(ctx, dirs, options.all, (node, dir) => scanOne(node, dir, options), options.sarif && '--sarif'),
    );
  command.addHelpText('after', exitCodesHelp('scan'));
  examples(command, [
    'nodereg scan',
    'nodereg scan ./my-node --json',
    'nodereg scan --sarif nodereg.sarif --fail-on medium',
    'nodereg scan --registry http://127.0.0.1:4880 --node my-node',
  ]);
}

/** `nodereg scan [dir]`, of one node. */
async function scanOne(ctx: Ctx, dir: string | undefined, options: Options): Promise<void> {
  const root = resolve(dir ?? '.');
  const { loadProject } = await import('../../package/project.js');
  let project;
  try {
    project = await loadProject(root);
  } catch (error) {
    throw invalidInput(`cannot read the project in ${root}: ${(error as Error).message}`);
  }
  for (const warning of project.warnings) ctx.out.warn(warning);
  const report = await scanProject(project, false, options.cache ? { root, env: ctx.env } : undefined);
  if (options.node) await (await import('../approved.js')).markApproved(ctx, report, options.node);
  if (options.sarif) {
    const { toSarif } = await import('../../scan/sarif.js');
    try {
      writeFileSync(resolve(options.sarif), `${JSON.stringify(toSarif(report.findings, ctx.version), null, 2)}\n`);
    } catch (error) {
      throw invalidInput(`cannot write --sarif ${options.sarif}: ${fileProblem(error)}`);
    }
  }
  ctx.out.result(report, () => findingsText(ctx.out, report, project.files));
  if (blocking(report, options.failOn).length) throw new ResultExit(EXIT.failure);
}
