// Versioned schema changes, applied in order once each (PRAGMA user_version counts them).
// Append only: never edit a migration that has shipped.
export interface Migration {
  name: string;
  sql: string;
}

export const migrations: Migration[] = [];
