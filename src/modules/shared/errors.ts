// The one error type of the domain. HTTP layers turn it into the API envelope or a page.

/**
 * Messages per field. A field name can be a key the client chose (`constructor`, `__proto__`):
 * build these with a Map or Object.fromEntries and read one with Object.hasOwn, never with
 * `errors[field] ??= []` or `field in errors`, which find Object.prototype's members.
 */
export type FieldErrors = Record<string, string[]>;

export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors: FieldErrors = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

/** A 422 whose message is the first field error, as Laravel answers. */
export class ValidationError extends AppError {
  constructor(errors: FieldErrors) {
    const first = Object.values(errors).find((messages) => messages.length > 0)?.[0] ?? 'The given data was invalid.';
    super(422, first, errors);
    this.name = 'ValidationError';
  }
}

export const unauthenticated = (): AppError => new AppError(401, 'Unauthenticated.');
export const forbidden = (): AppError => new AppError(403, 'This action is unauthorized.');
export const notFound = (message = 'Not Found.'): AppError => new AppError(404, message);
