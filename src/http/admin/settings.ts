// Settings in the panel. "Site" is a form of named, typed fields (the site's own settings:
// name, description, the home page, languages, posts per page), saved together; "Advanced"
// lists the custom settings, each a key whose value is typed in as text (stored as a JSON
// string) or as JSON, public (returned by GET /api/settings) or private; add, edit, delete.
// Every rule is the settings service's (src/modules/settings): these handlers read the form,
// call it and answer.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SettingRow } from '../../db/types.js';
import { LOCALES, t, type Locale } from '../../modules/i18n/translator.js';
import { languageName } from '../../modules/posts/urls.js';
import type { SettingForm } from '../../modules/settings/settings.service.js';
import type { SiteFormInput } from '../../modules/settings/site-form.js';
import { MAX_POSTS_PER_PAGE } from '../../modules/settings/site.js';
import { notFound, type FieldErrors } from '../../modules/shared/errors.js';
import { checked, done, field, localeFor, oldInput, refusal, schemaErrors } from '../shared/forms.js';
import { acting, adminPage } from './support.js';

export const SETTING_KEY_PATTERN = '^[a-z][a-z0-9_.-]*$';

const ValueFields = {
  type: Type.Union([Type.Literal('text'), Type.Literal('json')]),
  value: Type.String({ maxLength: 10_000 }),
  is_public: Type.Optional(Type.Literal('1')),
};
// A new key may not be "site": POST /admin/settings/site is the site form's.
const NEW_KEY_PATTERN = '^(?!site$)[a-z][a-z0-9_.-]*$';
const CreateBody = Type.Object({ key: Type.String({ minLength: 1, maxLength: 100, pattern: NEW_KEY_PATTERN }), ...ValueFields });
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

/** The form's value as typed and how to read it, for the settings service's rules. */
const settingForm = (request: FastifyRequest): SettingForm => ({ type: field(request, 'type'), value: field(request, 'value'), isPublic: field(request, 'is_public') === '1' });

/** The site form as sent: the ticked languages arrive as one value or several. */
function siteInput(request: FastifyRequest): SiteFormInput {
  const locales = (request.body as Record<string, unknown> | undefined)?.locales;
  return {
    site_name: field(request, 'site_name'),
    site_description: field(request, 'site_description'),
    home_headline: field(request, 'home_headline'),
    home_intro: field(request, 'home_intro'),
    home_api_card: checked(request, 'home_api_card'),
    default_locale: field(request, 'default_locale'),
    locales: (Array.isArray(locales) ? locales : [locales]).filter((code): code is string => typeof code === 'string'),
    posts_per_page: field(request, 'posts_per_page'),
  };
}

export const settingRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const findOr404 = async (request: FastifyRequest): Promise<SettingRow> => {
    const key = (request.params as { key?: string }).key ?? '';
    const row = new RegExp(SETTING_KEY_PATTERN).test(key) ? await app.services.settings.findCustom(key) : undefined;
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

  /** The settings page: the site form (as stored, or as sent with its errors) and the custom settings. */
  const index = async (request: FastifyRequest, reply: FastifyReply, site: Record<string, unknown> | null, errors: FieldErrors = {}, status = 200) => {
    const locale = localeFor(app, request);
    const settings = await app.services.settings.custom();
    const rows = settings.map((setting) => ({ ...setting, display: typeof setting.value === 'string' ? setting.value : JSON.stringify(setting.value) }));
    return adminPage(request, reply, 'admin/settings/index', 'settings', {
      title: t(locale, 'admin.nav.settings'),
      site: site ?? (await app.services.settings.siteForm()),
      errors,
      // A choice starts with a capital, as "English" does ("anglais" is "Anglais" in a list of French).
      languages: LOCALES.map((code) => [code, languageName(code, locale).replace(/^./, (first) => first.toLocaleUpperCase(locale))]),
      maxPostsPerPage: MAX_POSTS_PER_PAGE,
      rows,
    }, status);
  };

  app.get('/settings', { config: { auth: 'admin' } }, (request, reply) => index(request, reply, null));

  app.post('/settings/site', { config: { auth: 'admin' }, schema: { body: Type.Object({}) }, attachValidation: true }, async (request, reply) => {
    const locale = localeFor(app, request);
    const input = siteInput(request);
    try {
      await app.services.settings.saveSite(acting(request), input, schemaErrors(request, locale));
      return done(request, reply, '/admin/settings', t(locale, 'settings_form.saved'));
    } catch (error) {
      return index(request, reply, input, refusal(error, locale).errors, 422);
    }
  });

  app.get('/settings/new', { config: { auth: 'admin' } }, async (request, reply) =>
    form(request, reply, localeFor(app, request), null, { key: '', type: 'text', value: '', is_public: false }),
  );

  app.post('/settings', { config: { auth: 'admin' }, schema: { body: CreateBody }, attachValidation: true }, async (request, reply) => {
    const locale = localeFor(app, request);
    const key = field(request, 'key');
    try {
      await app.services.settings.createCustom(acting(request), key, settingForm(request), schemaErrors(request, locale));
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
      await app.services.settings.updateCustom(acting(request), setting, settingForm(request), schemaErrors(request, locale));
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
    await app.services.settings.delete(acting(request), setting.key);
    return done(request, reply, '/admin/settings', t(locale, 'admin.settings.deleted', { key: setting.key }));
  });
};
