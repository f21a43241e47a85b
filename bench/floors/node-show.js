// The floor of `nodereg node show ID`: the argument parser, the command's two GETs over node:http, the
// contract's checks of both answers (as the client runs them), and the answers printed as they came.
import http from 'node:http';
import { Command } from 'commander';
import { meetsContract } from '../../src/contract/answers.js';

const get = (url) =>
  new Promise((resolve, reject) =>
    http
      .get(url, (answer) => {
        let text = '';
        answer.setEncoding('utf8');
        answer.on('data', (chunk) => (text += chunk));
        answer.on('end', () => resolve(text));
      })
      .on('error', reject),
  );

const program = new Command('nodereg');
program.command('show <id>').action(async (id) => {
  const url = `${process.env.NODEREG_REGISTRY}/nodes/${encodeURIComponent(id)}`;
  const [node, versions] = await Promise.all([get(url), get(`${url}/versions`)]);
  const met =
    (await meetsContract('getNode', JSON.parse(node))) &&
    (await meetsContract('listNodeVersions', JSON.parse(versions)));
  if (!met) throw new Error("an answer is not the contract's");
  process.stdout.write(`${node}\n${versions}\n`);
});
void program.parseAsync();
