// What the site's form actions share beyond src/http/shared/forms.ts: one way to answer a
// refusal — the form again for a browser, the {message, errors} envelope for a script asking
// for JSON.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { wantsJson } from '../../plugins/web-guard.js';
import { field, localeFor, refusal } from '../shared/forms.js';

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
    const refused = refusal(error, localeFor(request.server, request));
    void reply.headers(refused.headers);
    if (wantsJson(request)) return reply.code(refused.status).header('cache-control', 'no-store').send({ message: refused.message, errors: refused.errors });
    const old = Object.fromEntries(form.keep.map((name) => [name, field(request, name)]));
    return reply.page(form.template, { ...form.data, errors: refused.errors, old, alert: Object.keys(refused.errors).length === 0 ? refused.message : null }, refused.status);
  }
}
