// /user/api-tokens: the logged-in user makes tokens for the API (name, abilities and an optional
// expiry date of its own), sees each new token's plaintext once, lists their own tokens and revokes one or all. Behind 'verified',
// as /profile is; every form is CSRF-checked by the web guard.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ABILITIES, type Ability } from '../../modules/tokens/abilities.js';
import { chosenAbilities } from '../../modules/tokens/tokens.service.js';
import { lastDayBefore } from '../../modules/tokens/expiry.js';
import { formatDateTime } from '../../modules/i18n/formats.js';
import { attributeName, t, type Locale } from '../../modules/i18n/translator.js';
import { ValidationError, notFound, type FieldErrors } from '../../modules/shared/errors.js';
import type { User } from '../../db/types.js';
import { canAccessPanel } from '../../modules/users/users.service.js';
import { flash } from '../../plugins/views.js';
import { wantsJson } from '../../plugins/web-guard.js';
import { done, field, localeFor, schemaErrors } from '../shared/forms.js';
import { submit } from './forms.js';

const PAGE = '/user/api-tokens';
const MAX_ID = 2_147_483_647;

const CreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  // One ticked box arrives as a string, several as a list; the names are checked by the domain.
  abilities: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Array(Type.String({ maxLength: 64 }), { maxItems: 16 })])),
  // A day (YYYY-MM-DD) or empty; checked by the domain (TokenService.ownExpiry).
  expires_at: Type.Optional(Type.String({ maxLength: 32 })),
});

type NewToken = { name: string; plaintext: string };

/** The boxes ticked in the form (none when the field is absent or malformed). */
function ticked(request: FastifyRequest): string[] {
  const value = (request.body as Record<string, unknown> | undefined)?.abilities;
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/**
 * The abilities this user can use, so the only ones the form offers. The API lets only
 * administrators write posts (assertEditor in http/api/posts.ts, checked on every request), so
 * posts:write is offered to them alone: on anyone else's token it would be refused every time.
 */
function usableAbilities(user: Pick<User, 'is_admin'>): readonly Ability[] {
  return canAccessPanel(user) ? ABILITIES : ABILITIES.filter((ability) => ability !== 'posts:write');
}

/** Each offered box with its label and help: an administrator's read also reaches drafts. */
function abilityChoices(user: Pick<User, 'is_admin'>) {
  const admin = canAccessPanel(user);
  return usableAbilities(user).map((ability) => {
    const key = ability.replace(/[^a-z]+/g, '_');
    return { value: ability, id: `ability-${key}`, label: `tokens.ability.${key}`, hint: `tokens.ability_hint.${key}${admin && ability === 'posts:read' ? '_admin' : ''}` };
  });
}

/** A stored time in the visitor's language, in UTC (the server does not know the visitor's zone). */
function formatter(locale: Locale): (iso: string) => string {
  return (iso) => formatDateTime(locale, iso);
}

/**
 * The date field's range, in UTC days: from today to the day the global lifetime of a token made
 * now ends (`end`, null: no limit), and that end itself for the hint.
 */
function expiryRange(end: number | null) {
  return { min: new Date().toISOString().slice(0, 10), max: end === null ? null : lastDayBefore(end), maxInstant: end === null ? null : new Date(end).toISOString() };
}

/** A path id of a token; anything that is not one is simply not found. */
function tokenId(raw: string): number {
  const id = /^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : NaN;
  if (!(id <= MAX_ID)) throw notFound();
  return id;
}

export async function apiTokenRoutes(app: FastifyInstance): Promise<void> {
  const userId = (request: FastifyRequest): number => request.siteUser!.id;

  const pageData = async (request: FastifyRequest, chosen: readonly string[]) => ({
    title: t(localeFor(app, request), 'tokens.title'),
    tokens: await app.services.tokens.listForUser(userId(request)),
    abilities: abilityChoices(request.siteUser!),
    chosen,
    when: formatter(localeFor(app, request)),
    // The date field's range: from today to the last day the global lifetime allows (UTC).
    expiry: expiryRange(app.services.tokens.tokenLifetimeEnd()),
  });

  /** The date field's expiry (none when empty), or its refusal added to `errors`, so both fields' errors show at once. */
  const expiryOf = (day: string, locale: Locale, errors: FieldErrors): Date | null => {
    if (day === '') return null;
    try {
      return app.services.tokens.ownExpiry({ day });
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      Object.assign(errors, error.errorsIn(locale));
      return null;
    }
  };

  /** A token of the logged-in user, or 404: another user's token is as good as absent. */
  const ownToken = async (request: FastifyRequest<{ Params: { id: string } }>) => {
    const token = await app.services.tokens.findForUser(userId(request), tokenId(request.params.id));
    if (token === undefined) throw notFound();
    return token;
  };

  app.get(PAGE, { config: { auth: 'verified' } }, async (request, reply) => {
    // Read before the page takes the flash: the plaintext is shown on this one page view only.
    const flashed = request.session.flash?.apiToken as NewToken | undefined;
    const newToken = flashed !== undefined && typeof flashed.plaintext === 'string' ? flashed : null;
    return reply.page('api-tokens', { ...(await pageData(request, ['posts:read'])), newToken });
  });

  app.post(PAGE, { config: { auth: 'verified' }, schema: { body: CreateBody }, attachValidation: true }, async (request, reply) => {
    const form = { template: 'api-tokens', keep: ['name', 'expires_at'], data: { ...(await pageData(request, ticked(request))), newToken: null } };
    return submit(request, reply, form, async () => {
      const locale = localeFor(app, request);
      // Every field's error at once: the schema's, the abilities', the date's.
      const errors: FieldErrors = { ...schemaErrors(request, locale) };
      const abilities = chosenAbilities(ticked(request));
      // A box the form did not offer (posts:write posted by someone who is not an administrator)
      // is refused like an unknown one, with the form's 422: dropping it silently would hand
      // back a token other than the one asked for.
      const usable = usableAbilities(request.siteUser!);
      if (abilities === null || abilities.some((ability) => !usable.includes(ability))) errors.abilities = [t(locale, 'validation.in', { attribute: attributeName('abilities', locale) })];
      const expiresAt = errors.expires_at === undefined ? expiryOf(field(request, 'expires_at'), locale, errors) : null;
      if (abilities === null || Object.keys(errors).length > 0) throw new ValidationError(errors);
      const name = field(request, 'name');
      const token = await app.services.tokens.issue(userId(request), name, abilities, expiresAt);
      if (wantsJson(request)) return reply.code(201).header('cache-control', 'no-store').send({ token: token.plaintext, id: token.id, name, abilities, expires_at: expiresAt?.toISOString() ?? null });
      // The plaintext rides in the session to the next page, which removes it as it shows it;
      // only its SHA-256 is kept in the tokens table.
      flash(request, { apiToken: { name, plaintext: token.plaintext } satisfies NewToken });
      return done(request, reply, PAGE, t(locale, 'tokens.created'));
    });
  });

  app.get<{ Params: { id: string } }>(`${PAGE}/:id/delete`, { config: { auth: 'verified' } }, async (request, reply) => {
    const token = await ownToken(request);
    const locale = localeFor(app, request);
    return reply.page('tokens/confirm', {
      title: t(locale, 'tokens.confirm.title'),
      message: t(locale, 'tokens.confirm.message', { name: token.name }),
      action: `${PAGE}/${token.id}/delete`,
      button: t(locale, 'tokens.confirm.button'),
    });
  });

  app.post<{ Params: { id: string } }>(`${PAGE}/:id/delete`, { config: { auth: 'verified' } }, async (request, reply) => {
    const revoked = await app.services.tokens.revokeForUser(userId(request), tokenId(request.params.id));
    if (!revoked) throw notFound();
    return done(request, reply, PAGE, t(localeFor(app, request), 'tokens.revoked'));
  });

  app.get(`${PAGE}/delete-all`, { config: { auth: 'verified' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    return reply.page('tokens/confirm', {
      title: t(locale, 'tokens.confirm_all.title'),
      message: t(locale, 'tokens.confirm_all.message'),
      action: `${PAGE}/delete-all`,
      button: t(locale, 'tokens.confirm_all.button'),
    });
  });

  app.post(`${PAGE}/delete-all`, { config: { auth: 'verified' } }, async (request, reply) => {
    await app.services.tokens.revokeAll(userId(request));
    return done(request, reply, PAGE, t(localeFor(app, request), 'tokens.revoked_all'));
  });
}
