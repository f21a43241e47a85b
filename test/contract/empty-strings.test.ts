// One rule for every optional string of a node or version body: "" is unset, read as not sent (the
// registry keeps what it has), and null clears. A URL read "" as not sent while a version requirement
// stored it, clearing what was set: the incumbent sends "" for each field it has no value for.
import { describe, expect, it } from 'vitest';
import { checkRequest } from '../../src/contract/requests.js';
import { NodeInput, NodeVersionInput, PublishBody } from '../../src/contract/resources.js';

const optionalStrings = {
  node: [
    'name',
    'description',
    'author',
    'license',
    'repository',
    'icon',
    'banner_url',
    'category',
    'supported_appui_version',
    'supported_appui_frontend_version',
    'status_detail',
  ],
  version: ['changelog', 'supported_appui_version', 'supported_appui_frontend_version'],
};

describe('"" in an optional string is unset', () => {
  it('every optional string of a node body reads "" as not sent and keeps null, which clears', () => {
    const empties = Object.fromEntries(optionalStrings.node.map((field) => [field, '']));
    expect(NodeInput.parse(empties)).toEqual({});
    const nulls = Object.fromEntries(optionalStrings.node.map((field) => [field, null]));
    expect(NodeInput.parse(nulls)).toEqual(nulls);
    // as the incumbent names them too
    expect(NodeInput.parse({ supported_comfyui_version: '', supported_comfyui_frontend_version: '' })).toEqual({});
  });

  it('a version body reads "" as not sent in each optional string', () => {
    const empties = Object.fromEntries(optionalStrings.version.map((field) => [field, '']));
    expect(NodeVersionInput.parse({ version: '1.0.0', ...empties })).toEqual({ version: '1.0.0' });
  });

  it('the generated check of a publish body reads it the same', () => {
    const body = {
      node: { id: 'n', supported_appui_version: '', icon: '' },
      node_version: { version: '1.0.0', supported_appui_version: '' },
    };
    expect(checkRequest('PublishBody', body)).toEqual(PublishBody.parse(body));
    expect(PublishBody.parse(body)).toEqual({ node: { id: 'n' }, node_version: { version: '1.0.0' } });
  });
});
