// Users in the panel: the searchable table, create, edit (name, email, verified, admin) and
// delete after a confirmation step. An administrator can neither demote nor delete themself.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../db/types.js';
import { USER_SORTS } from '../../modules/admin/admin.repository.js';
import { RULES } from '../../modules/admin/admin.service.js';
import { parseListParams } from '../../modules/admin/listing.js';
import { t, type Locale } from '../../modules/i18n/translator.js';
import { notFound, type FieldErrors } from '../../modules/shared/errors.js';
import { canAccessPanel } from '../../modules/users/users.service.js';
import { done, field, localeFor, oldInput, refusal, schemaErrors } from '../shared/forms.js';
import { acting, actorOf, adminPage, idParam, refused, tableLinks } from './support.js';

const Checkbox = Type.Optional(Type.Literal('1'));
const Name = Type.String({ minLength: 1, maxLength: 255 });
const Email = Type.String({ minLength: 1, maxLength: 255, format: 'email' });

const CreateBody = Type.Object({
  name: Name,
  email: Email,
  password: Type.String({ minLength: 1 }),
  password_confirmation: Type.Optional(Type.String()),
  verified: Checkbox,
});
const UpdateBody = Type.Object({ name: Name, email: Email, verified: Checkbox, admin: Checkbox });

type FormValues = { name: string; email: string; verified: boolean; admin: boolean };

const valuesOf = (user: User): FormValues => ({ name: user.name, email: user.email, verified: user.email_verified_at !== null, admin: canAccessPanel(user) });

function submitted(body: unknown): FormValues {
  const old = oldInput(body);
  return { name: old.name ?? '', email: old.email ?? '', verified: old.verified === '1', admin: old.admin === '1' };
}

export const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const findOr404 = async (request: FastifyRequest): Promise<User> => {
    const user = await app.services.admin.findUser(idParam(request));
    if (user === undefined) throw notFound();
    return user;
  };

  const form = (request: FastifyRequest, reply: FastifyReply, locale: Locale, target: User | null, values: FormValues, errors: FieldErrors = {}, status = 200) =>
    adminPage(request, reply, 'admin/users/form', 'users', {
      title: target === null ? t(locale, 'admin.users.new') : t(locale, 'admin.users.edit', { name: target.name }),
      target,
      self: target !== null && target.id === actorOf(request).id,
      values,
      errors,
    }, status);

  app.get('/users', { config: { auth: 'admin' } }, async (request, reply) => {
    const params = parseListParams(request.query, USER_SORTS, { sort: 'created_at', dir: 'desc' });
    const result = await app.services.admin.users(params, params.page, params.perPage);
    return adminPage(request, reply, 'admin/users/index', 'users', {
      title: t(localeFor(app, request), 'admin.nav.users'),
      params,
      result,
      links: tableLinks('/admin/users', params),
      actorId: actorOf(request).id,
    });
  });

  app.get('/users/new', { config: { auth: 'admin' } }, async (request, reply) =>
    form(request, reply, localeFor(app, request), null, { name: '', email: '', verified: true, admin: false }),
  );

  app.post('/users', { config: { auth: 'admin' }, schema: { body: CreateBody }, attachValidation: true }, async (request, reply) => {
    const locale = localeFor(app, request);
    const raw = request.body as Record<string, unknown>;
    const newUser = {
      name: field(request, 'name'),
      email: field(request, 'email'),
      password: field(request, 'password'),
      password_confirmation: typeof raw.password_confirmation === 'string' ? raw.password_confirmation : undefined,
      verified: field(request, 'verified') === '1',
    };
    try {
      const user = await app.services.admin.createUser(acting(request), newUser, locale, schemaErrors(request, locale));
      return done(request, reply, '/admin/users', t(locale, 'admin.users.created', { name: user.name }));
    } catch (error) {
      return form(request, reply, locale, null, submitted(raw), refusal(error, locale).errors, 422);
    }
  });

  app.get('/users/:id/edit', { config: { auth: 'admin' } }, async (request, reply) => {
    const user = await findOr404(request);
    return form(request, reply, localeFor(app, request), user, valuesOf(user));
  });

  app.post('/users/:id', { config: { auth: 'admin' }, schema: { body: UpdateBody }, attachValidation: true }, async (request, reply) => {
    const locale = localeFor(app, request);
    const target = await findOr404(request);
    const invalid = schemaErrors(request, locale);
    if (Object.keys(invalid).length > 0) return form(request, reply, locale, target, submitted(request.body), invalid, 422);
    const { name, email, verified, admin } = request.body;
    try {
      const user = await app.services.admin.updateUser(acting(request), target, { name, email, verified: verified === '1', admin: admin === '1' });
      return done(request, reply, '/admin/users', t(locale, 'admin.users.updated', { name: user.name }));
    } catch (error) {
      return form(request, reply, locale, target, submitted(request.body), refusal(error, locale).errors, 422);
    }
  });

  app.get('/users/:id/delete', { config: { auth: 'admin' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    const user = await findOr404(request);
    if (user.id === actorOf(request).id) throw refused(locale, RULES.cannotDeleteSelf);
    return adminPage(request, reply, 'admin/confirm', 'users', {
      title: t(locale, 'admin.users.delete_title'),
      message: t(locale, 'admin.users.delete_confirm', { name: user.name, email: user.email }),
      action: `/admin/users/${user.id}/delete`,
      button: t(locale, 'admin.users.delete'),
      cancel: '/admin/users',
    });
  });

  app.post('/users/:id/delete', { config: { auth: 'admin' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    const user = await findOr404(request);
    if (user.id === actorOf(request).id) throw refused(locale, RULES.cannotDeleteSelf);
    await app.services.admin.deleteUser(acting(request), user);
    return done(request, reply, '/admin/users', t(locale, 'admin.users.deleted', { name: user.name }));
  });
};
