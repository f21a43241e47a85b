import * as z from 'zod';

export const FieldError = z.object({ path: z.string(), message: z.string() });
export type FieldError = z.infer<typeof FieldError>;

/** `{"error": CODE, "message": TEXT, details?, hint?}` from every layer of the server. */
export const ErrorBody = z.looseObject({
  error: z.string(),
  message: z.string(),
  details: z.array(FieldError).optional(),
  hint: z.string().optional(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;
