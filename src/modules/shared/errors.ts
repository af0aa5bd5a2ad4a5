// The one error type of the domain. HTTP layers turn it into the API envelope or a page.
import { translate, type Message } from '../i18n/translator.js';

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

/** Messages per field, each a key still to translate or a text already written in the reader's language. */
export type FieldMessages = Record<string, Array<Message | string>>;

/** The messages of each field in `locale` (keys as in FieldErrors: own properties only). */
export function translateFields(locale: string, messages: FieldMessages): FieldErrors {
  return Object.fromEntries(
    Object.entries(messages).map(([field, list]) => [field, list.map((message) => (typeof message === 'string' ? message : translate(locale, message)))]),
  );
}

/**
 * A 422 whose message is the first field error, as Laravel answers. Built from message keys
 * (`invalid`), its `errors` are in English, the API's language, and `errorsIn` gives them in
 * any other; built from written texts, those texts are its answer in every language.
 */
export class ValidationError extends AppError {
  constructor(
    errors: FieldErrors,
    private readonly messages: FieldMessages = errors,
  ) {
    const first = Object.values(errors).find((messages) => messages.length > 0)?.[0] ?? 'The given data was invalid.';
    super(422, first, errors);
    this.name = 'ValidationError';
  }

  /** The errors in `locale`. */
  errorsIn(locale: string): FieldErrors {
    return translateFields(locale, this.messages);
  }
}

/** A 422 of message keys (and texts already written), for answers in each reader's language. */
export function invalid(messages: FieldMessages): ValidationError {
  return new ValidationError(translateFields('en', messages), messages);
}

export const unauthenticated = (): AppError => new AppError(401, 'Unauthenticated.');
export const forbidden = (): AppError => new AppError(403, 'This action is unauthorized.');
export const notFound = (message = 'Not Found.'): AppError => new AppError(404, message);
