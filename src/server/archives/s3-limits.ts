// What S3 takes, in a module of its own: the backend chooser and the S3 storage both read it, and
// neither loads the other (nor the S3 SDK) for it.

/** The largest object one S3 PUT may store, so the largest archive S3 storage takes (`--max-archive`). */
export const S3_MAX_PUT = 5 * 1024 ** 3;
