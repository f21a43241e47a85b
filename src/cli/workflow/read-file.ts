// A workflow file as the host application saves or exports it, read into the node classes it uses;
// every problem is a usage error naming the file.
import { readFileSync } from 'node:fs';
import { fileProblem, invalidInput } from '../errors.js';
import { WorkflowFormatError, workflowNodeTypes, type WorkflowNodeTypes } from './node-types.js';

function readWorkflow(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw invalidInput(`cannot read ${file}: ${fileProblem(error)}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalidInput(
      `${file} is not JSON: ${(error as Error).message}`,
      'give the workflow as the host application saves or exports it (.json)',
    );
  }
}

export function readWorkflowTypes(file: string): WorkflowNodeTypes {
  try {
    return workflowNodeTypes(readWorkflow(file));
  } catch (error) {
    if (error instanceof WorkflowFormatError) throw invalidInput(`${file}: ${error.message}`);
    throw error;
  }
}
