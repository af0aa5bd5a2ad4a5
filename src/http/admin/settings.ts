// Settings in the panel: each setting's value and whether it is public (public ones are what
// GET /api/settings returns); add and delete. A value is typed in as text (stored as a JSON
// string) or as JSON (numbers, booleans, lists, objects), chosen explicitly on the form so
// that "15" or "true" typed as text stay text.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SettingRow } from '../../db/types.js';
import type { SettingForm } from '../../modules/admin/admin.service.js';
import { t, type Locale } from '../../modules/i18n/translator.js';
import { notFound, type FieldErrors } from '../../modules/shared/errors.js';
import { done, field, localeFor, oldInput, refusal, schemaErrors } from '../shared/forms.js';
import { acting, adminPage } from './support.js';

export const SETTING_KEY_PATTERN = '^[a-z][a-z0-9_.-]*$';

const ValueFields = {
  type: Type.Union([Type.Literal('text'), Type.Literal('json')]),
  value: Type.String({ maxLength: 10_000 }),
  is_public: Type.Optional(Type.Literal('1')),
};
const CreateBody = Type.Object({ key: Type.String({ minLength: 1, maxLength: 100, pattern: SETTING_KEY_PATTERN }), ...ValueFields });
const UpdateBody = Type.Object(ValueFields);

type FormValues = { key: string; type: string; value: string; is_public: boolean };

function decode(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return null;
  }
}

/** How a stored value is shown in the form: a string as itself, anything else as indented JSON. */
function valuesOf(row: SettingRow): FormValues {
  const value = decode(row.value);
  return typeof value === 'string'
    ? { key: row.key, type: 'text', value, is_public: Number(row.is_public) === 1 }
    : { key: row.key, type: 'json', value: JSON.stringify(value, null, 2), is_public: Number(row.is_public) === 1 };
}

function submitted(body: unknown, key?: string): FormValues {
  const old = oldInput(body);
  return { key: key ?? old.key ?? '', type: old.type ?? 'text', value: old.value ?? '', is_public: old.is_public === '1' };
}

/** The form's value as typed and how to read it, for AdminService's rules. */
const settingForm = (request: FastifyRequest): SettingForm => ({ type: field(request, 'type'), value: field(request, 'value'), isPublic: field(request, 'is_public') === '1' });

export const settingRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const findOr404 = async (request: FastifyRequest): Promise<SettingRow> => {
    const key = (request.params as { key?: string }).key ?? '';
    const row = new RegExp(SETTING_KEY_PATTERN).test(key) ? await app.services.admin.findSetting(key) : undefined;
    if (row === undefined) throw notFound();
    return row;
  };

  const form = (request: FastifyRequest, reply: FastifyReply, locale: Locale, setting: SettingRow | null, values: FormValues, errors: FieldErrors = {}, status = 200) =>
    adminPage(request, reply, 'admin/settings/form', 'settings', {
      title: setting === null ? t(locale, 'admin.settings.new') : t(locale, 'admin.settings.edit', { key: setting.key }),
      setting,
      values,
      errors,
    }, status);

  app.get('/settings', { config: { auth: 'admin' } }, async (request, reply) => {
    const settings = await app.services.settings.all();
    const rows = settings.map((setting) => ({ ...setting, display: typeof setting.value === 'string' ? setting.value : JSON.stringify(setting.value) }));
    return adminPage(request, reply, 'admin/settings/index', 'settings', { title: t(localeFor(app, request), 'admin.nav.settings'), rows });
  });

  app.get('/settings/new', { config: { auth: 'admin' } }, async (request, reply) =>
    form(request, reply, localeFor(app, request), null, { key: '', type: 'text', value: '', is_public: false }),
  );

  app.post('/settings', { config: { auth: 'admin' }, schema: { body: CreateBody }, attachValidation: true }, async (request, reply) => {
    const locale = localeFor(app, request);
    const key = field(request, 'key');
    try {
      await app.services.admin.createSetting(acting(request), key, settingForm(request), schemaErrors(request, locale));
      return done(request, reply, '/admin/settings', t(locale, 'admin.settings.created', { key }));
    } catch (error) {
      return form(request, reply, locale, null, submitted(request.body), refusal(error, locale).errors, 422);
    }
  });

  app.get('/settings/:key/edit', { config: { auth: 'admin' } }, async (request, reply) => {
    const setting = await findOr404(request);
    return form(request, reply, localeFor(app, request), setting, valuesOf(setting));
  });

  app.post('/settings/:key', { config: { auth: 'admin' }, schema: { body: UpdateBody }, attachValidation: true }, async (request, reply) => {
    const locale = localeFor(app, request);
    const setting = await findOr404(request);
    try {
      await app.services.admin.updateSetting(acting(request), setting, settingForm(request), schemaErrors(request, locale));
      return done(request, reply, '/admin/settings', t(locale, 'admin.settings.updated', { key: setting.key }));
    } catch (error) {
      return form(request, reply, locale, setting, submitted(request.body, setting.key), refusal(error, locale).errors, 422);
    }
  });

  app.get('/settings/:key/delete', { config: { auth: 'admin' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    const setting = await findOr404(request);
    return adminPage(request, reply, 'admin/confirm', 'settings', {
      title: t(locale, 'admin.settings.delete_title'),
      message: t(locale, Number(setting.is_public) === 1 ? 'admin.settings.delete_confirm_public' : 'admin.settings.delete_confirm', { key: setting.key }),
      action: `/admin/settings/${encodeURIComponent(setting.key)}/delete`,
      button: t(locale, 'admin.settings.delete'),
      cancel: '/admin/settings',
    });
  });

  app.post('/settings/:key/delete', { config: { auth: 'admin' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    const setting = await findOr404(request);
    await app.services.admin.deleteSetting(acting(request), setting.key);
    return done(request, reply, '/admin/settings', t(locale, 'admin.settings.deleted', { key: setting.key }));
  });
};
