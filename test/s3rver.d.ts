// s3rver ships no types: what test/s3.ts uses of it.
declare module 's3rver' {
  export default class S3rver {
    constructor(options: { address: string; port: number; directory: string; silent: boolean });
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
  }
}
