/** The flags of `nodereg init`, as commander hands them over. */
export interface Options {
  publisher?: string;
  name?: string;
  displayName?: string;
  version?: string;
  description?: string;
  tags?: string;
  icon?: string;
}

export type Value = string | string[] | { file: string };

/** One key init would set: where it goes, and the flag that sets it. */
export interface Entry {
  table: 'project' | 'project.urls' | 'tool.nodereg';
  key: string;
  value: Value;
  flag: string;
}
