// What every form action shares: the visitor's locale, the schema's errors in that locale, the
// typed values to show again (never a password), and one way to answer — a redirect or the
// form again for a browser, 204 or the {message, errors} envelope for a script asking for JSON.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { formatValidationErrors } from '../shared/validation.js';
import type { Locale } from '../../modules/i18n/translator.js';
import { AppError, ValidationError, type FieldErrors } from '../../modules/shared/errors.js';
import { flash, localeOf } from '../../plugins/views.js';
import { wantsJson } from '../../plugins/web-guard.js';

/** The locale pages and mails use for this request (cookie, saved preference, Accept-Language). */
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

/** The route schema's failures (routes use attachValidation), in the visitor's language. */
export function schemaErrors(request: FastifyRequest, locale: string): FieldErrors {
  const validation = (request.validationError as { validation?: ErrorObject[] } | undefined)?.validation;
  return validation === undefined ? {} : formatValidationErrors(validation, locale).errors;
}

/** Throws the schema's failures as a 422. */
export function assertValid(request: FastifyRequest, locale: string): void {
  const errors = schemaErrors(request, locale);
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
}

/** The page first asked for before login, if it is a local page of the site. */
export function takeIntended(request: FastifyRequest): string | null {
  const intended = request.session.intended;
  delete request.session.intended;
  // Only a path of this site: "//host" is another site, and the panel has its own login.
  if (typeof intended !== 'string' || !intended.startsWith('/') || intended.startsWith('//') || intended.startsWith('/\\')) return null;
  if (intended === '/admin' || intended.startsWith('/admin/')) return null;
  return intended;
}

/** Success: 303 to `location` with an optional status message, or 204 for JSON. */
export function done(request: FastifyRequest, reply: FastifyReply, location: string, status?: string): FastifyReply {
  if (wantsJson(request)) return reply.code(204).send();
  if (status !== undefined && request.session !== null) flash(request, { status });
  return reply.redirect(location, 303);
}

export type FormPage = {
  template: string;
  /** Fields whose typed values are shown again; passwords never are. */
  keep: readonly string[];
  /** What the template needs besides errors and old values. */
  data?: Record<string, unknown>;
};

/**
 * Runs a form action. A 422 or 429 with field errors answers the form again with that status,
 * its errors and the kept values (no redirect, so nothing depends on the session to show them);
 * any other error goes to the error handler.
 */
export async function submit(request: FastifyRequest, reply: FastifyReply, form: FormPage, action: () => Promise<FastifyReply>): Promise<FastifyReply> {
  try {
    return await action();
  } catch (error) {
    if (!(error instanceof AppError) || (error.status !== 422 && error.status !== 429)) throw error;
    void reply.headers(error.headers);
    if (wantsJson(request)) return reply.code(error.status).header('cache-control', 'no-store').send({ message: error.message, errors: error.errors });
    const old = Object.fromEntries(form.keep.map((name) => [name, field(request, name)]));
    return reply.page(form.template, { ...form.data, errors: error.errors, old, alert: Object.keys(error.errors).length === 0 ? error.message : null }, error.status);
  }
}
