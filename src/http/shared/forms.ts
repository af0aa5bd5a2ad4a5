// What every form action shares, on the site's pages and in the panel: the visitor's locale, the
// schema's errors in that locale, fields read whatever the body is, the typed values to show
// again (never a password), the domain's refusals in the visitor's language, and one answer to
// a success — a redirect for a browser, 204 for a script asking for JSON.
import type { ErrorObject } from 'ajv';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { t, type Locale } from '../../modules/i18n/translator.js';
import { AppError, ValidationError, translateFields, type FieldErrors } from '../../modules/shared/errors.js';
import { flash, localeOf } from '../../plugins/views.js';
import { wantsJson } from '../../plugins/web-guard.js';
import { validationMessages } from './validation.js';

/** The locale pages and mails use for this request (cookie, a site user's saved preference, Accept-Language). */
export function localeFor(app: FastifyInstance, request: FastifyRequest): Locale {
  return localeOf(request, request.siteUserLocale ?? app.config.locale);
}

/** A form field as text: absent, repeated or non-string values read as empty. */
export function field(request: FastifyRequest, name: string): string {
  const value = (request.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

/** A checkbox (or a JSON boolean) that is ticked. */
export function checked(request: FastifyRequest, name: string): boolean {
  const value = (request.body as Record<string, unknown> | undefined)?.[name];
  return value === true || value === 'on' || value === '1' || value === 'true';
}

/**
 * The route schema's failures (routes use attachValidation) in the visitor's language; empty
 * when the form passed. A failure that names no field (a body that is not an object) is still a
 * failure, reported on the form as a whole under `_form`, so no handler reads fields from it.
 */
export function schemaErrors(request: FastifyRequest, locale: string): FieldErrors {
  const validation = (request.validationError as { validation?: ErrorObject[] } | undefined)?.validation;
  if (validation === undefined) return {};
  const messages = validationMessages(validation);
  return messages === null ? { _form: [t(locale, 'validation.object')] } : translateFields(locale, messages);
}

/** Throws the schema's failures as a 422. */
export function assertValid(request: FastifyRequest, locale: string): void {
  const errors = schemaErrors(request, locale);
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
}

/**
 * What a form sent, to fill it again after an error; passwords and the CSRF token never. The
 * keys are the client's: Object.fromEntries makes each an own property (an assignment to
 * `old['__proto__']` would call the prototype setter instead).
 */
export function oldInput(body: unknown): Record<string, string> {
  if (typeof body !== 'object' || body === null) return {};
  return Object.fromEntries(
    Object.entries(body as Record<string, unknown>).filter(
      (entry): entry is [string, string] => entry[0] !== '_token' && !/password/.test(entry[0]) && typeof entry[1] === 'string',
    ),
  );
}

export type Refusal = { status: number; message: string; errors: FieldErrors; headers: Record<string, string> };

/**
 * A refusal the form shows again (a 422 or 429 from the domain), its messages in `locale`; any
 * other error is thrown on, to the error handler.
 */
export function refusal(error: unknown, locale: string): Refusal {
  if (!(error instanceof AppError) || (error.status !== 422 && error.status !== 429)) throw error;
  if (!(error instanceof ValidationError)) return { status: error.status, message: error.message, errors: error.errors, headers: error.headers };
  const errors = error.errorsIn(locale);
  return { status: error.status, message: Object.values(errors).find((messages) => messages.length > 0)?.[0] ?? error.message, errors, headers: error.headers };
}

/** Success: 303 to `location` with an optional status message for the next page, or 204 for JSON. */
export function done(request: FastifyRequest, reply: FastifyReply, location: string, status?: string): FastifyReply {
  if (wantsJson(request)) return reply.code(204).send();
  if (status !== undefined && request.session !== null) flash(request, { status });
  return reply.redirect(location, 303);
}
