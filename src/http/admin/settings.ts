// Settings in the panel: each setting's value and whether it is public (public ones are what
// GET /api/settings returns); add and delete. A value is typed in as text (stored as a JSON
// string) or as JSON (numbers, booleans, lists, objects), chosen explicitly on the form so
// that "15" or "true" typed as text stay text.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SettingRow } from '../../db/types.js';
import { RULES } from '../../modules/admin/admin.service.js';
import { t, type Locale } from '../../modules/i18n/translator.js';
import { notFound, type FieldErrors } from '../../modules/shared/errors.js';
import { done, localeFor, oldInput, schemaErrors } from '../shared/forms.js';
import { adminPage, audit } from './support.js';

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

  /**
   * The form's value to store, or every error at once: the schema's, JSON that does not parse
   * (text is kept as typed), and, when adding, a key that exists.
   */
  const readForm = async (request: FastifyRequest, locale: Locale, adding: boolean): Promise<{ errors: FieldErrors } | { key: string; value: unknown; isPublic: boolean }> => {
    const errors: FieldErrors = { ...schemaErrors(request, locale) };
    const body = request.body as Record<string, unknown>;
    let value: unknown = body.value;
    if (errors.type === undefined && errors.value === undefined && body.type === 'json') {
      try {
        value = JSON.parse(String(body.value));
      } catch {
        errors.value = [t(locale, 'admin.settings.errors.json')];
      }
    }
    const key = typeof body.key === 'string' ? body.key : '';
    if (adding && errors.key === undefined && (await app.services.admin.findSetting(key)) !== undefined) errors.key = [t(locale, RULES.settingExists)];
    return Object.keys(errors).length > 0 ? { errors } : { key, value, isPublic: body.is_public === '1' };
  };

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
    const values = submitted(request.body);
    const read = await readForm(request, locale, true);
    if ('errors' in read) return form(request, reply, locale, null, values, read.errors, 422);
    const { key, isPublic } = read;
    await app.services.settings.put(key, read.value, isPublic);
    await audit(app, request, 'setting.created', { type: 'setting', id: key, label: key }, { fields: isPublic ? ['value', 'is_public'] : ['value'] });
    return done(request, reply, '/admin/settings', t(locale, 'admin.settings.created', { key }));
  });

  app.get('/settings/:key/edit', { config: { auth: 'admin' } }, async (request, reply) => {
    const setting = await findOr404(request);
    return form(request, reply, localeFor(app, request), setting, valuesOf(setting));
  });

  app.post('/settings/:key', { config: { auth: 'admin' }, schema: { body: UpdateBody }, attachValidation: true }, async (request, reply) => {
    const locale = localeFor(app, request);
    const setting = await findOr404(request);
    const values = submitted(request.body, setting.key);
    const read = await readForm(request, locale, false);
    if ('errors' in read) return form(request, reply, locale, setting, values, read.errors, 422);
    const { isPublic } = read;
    const stored = JSON.stringify(read.value);
    const fields = [...(stored !== setting.value ? ['value'] : []), ...(isPublic !== (Number(setting.is_public) === 1) ? ['is_public'] : [])];
    if (fields.length > 0) {
      await app.services.settings.put(setting.key, read.value, isPublic);
      await audit(app, request, 'setting.updated', { type: 'setting', id: setting.key, label: setting.key }, { fields });
    }
    return done(request, reply, '/admin/settings', t(locale, 'admin.settings.updated', { key: setting.key }));
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
    await app.services.settings.remove(setting.key);
    await audit(app, request, 'setting.deleted', { type: 'setting', id: setting.key, label: setting.key });
    return done(request, reply, '/admin/settings', t(locale, 'admin.settings.deleted', { key: setting.key }));
  });
};
