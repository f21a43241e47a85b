// The types of test/postgres-server.js (plain JavaScript: the child processes of test/server/child.ts run it too).
export function binDir(): string | undefined;
export function startPostgres(bin: string): Promise<{
  handle: { database(): Promise<string>; signal(signal: 'SIGSTOP' | 'SIGCONT'): void };
  stop(): Promise<void>;
}>;
