// The types of test/postgres-server.js (plain JavaScript: the benchmarks run it too).
import type postgres from 'postgres';

export interface PostgresHandle {
  /** A connection to the cluster's `postgres` database, for statements on databases. */
  admin: postgres.Sql;
  url(name: string): string;
  /** A new database, empty or a copy of `template`; its URL. */
  database(template?: string): Promise<string>;
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void;
  end(): Promise<void>;
}

export const SHARED_POSTGRES_DIR: string;
export function binDir(): string | undefined;
export function startPostgres(
  bin: string,
  dir?: string,
): Promise<{ port: number; dir: string; handle: PostgresHandle; stop(): Promise<void> }>;
export function stopPostgres(bin: string, dir: string): void;
export function connectPostgres(cluster: { port: number; dir: string }): Promise<PostgresHandle>;
