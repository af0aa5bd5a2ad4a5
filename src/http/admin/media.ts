// The media library in the panel: the uploads (newest first, in pages), an upload form (a file
// input that also takes a dropped file, public/media.js), and delete after a confirmation step
// that names the posts showing the image. The editor's widget posts to the same upload route and
// asks for JSON, so it can put the image's markdown into the post. What may be stored is
// MediaService's rule; this file reads the form and answers.
import multipart, { type MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseListParams } from '../../modules/admin/listing.js';
import { t, type Locale } from '../../modules/i18n/translator.js';
import { MAX_UPLOAD_BYTES, type MediaItem, type Upload } from '../../modules/media/media.service.js';
import { AppError, notFound, type FieldErrors } from '../../modules/shared/errors.js';
import { wantsJson } from '../../plugins/web-guard.js';
import { checked, done, localeFor, refusal } from '../shared/forms.js';
import { acting, adminPage, idParam, withQuery } from './support.js';

/** A size for people, in the reader's language: 2.4 MB, 830 kB (2,4 Mo, 830 ko). */
function formatBytes(locale: Locale, bytes: number): string {
  const [unit, value] = bytes >= 1024 * 1024 ? ['megabyte', bytes / 1024 / 1024] : ['kilobyte', Math.max(1, Math.round(bytes / 1024))];
  return new Intl.NumberFormat(locale, { style: 'unit', unit, unitDisplay: 'short', maximumFractionDigits: 1 }).format(value);
}

export async function mediaRoutes(app: FastifyInstance): Promise<void> {
  // The file of each upload request, read whole but never past the limit: a bigger one is cut
  // short by the parser and noted, so the form can say so beside its field (a 422, not a bare 413).
  const uploads = new WeakMap<FastifyRequest, Upload>();
  async function onFile(this: FastifyRequest, part: MultipartFile): Promise<void> {
    const bytes = await part.toBuffer();
    uploads.set(this, part.file.truncated ? { bytes: null, name: part.filename, tooLarge: true } : { bytes, name: part.filename });
    // In the body, the field holds the file's name: the CSRF check and the trim hook read text.
    (part as unknown as { value: string }).value = part.filename;
  }
  // Only this plugin's routes read multipart bodies; the form's few text fields stay small.
  await app.register(multipart, {
    attachFieldsToBody: 'keyValues',
    onFile,
    throwFileSizeLimit: false,
    limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 4, parts: 5, fieldSize: 1024 },
  });
  // A body that is not well-formed multipart (cut short, no closing boundary, a boundary over
  // busboy's limit) fails in the plugin's preValidation hook with busboy's own Error, which
  // carries no status: it is the sender's fault, a 400, not a 500. Only errors thrown before this
  // context's hooks had read the body are read so; the shared handler answers every error.
  const bodyRead = new WeakSet<FastifyRequest>();
  app.addHook('preValidation', async (request) => {
    bodyRead.add(request);
  });
  app.setErrorHandler((error, request) => {
    const status = (error as { statusCode?: unknown }).statusCode;
    if (request.isMultipart() && !bodyRead.has(request) && !(error instanceof AppError) && typeof status !== 'number') {
      throw new AppError(400, 'The request could not be understood.');
    }
    throw error;
  });

  const findOr404 = async (request: FastifyRequest): Promise<MediaItem> => {
    const item = await app.services.media.find(idParam(request));
    if (item === undefined) throw notFound();
    return item;
  };

  const library = async (request: FastifyRequest, reply: FastifyReply, locale: Locale, errors: FieldErrors = {}, status = 200) => {
    const params = parseListParams(request.query, ['created_at'] as const, { sort: 'created_at', dir: 'desc' }, 24);
    const result = await app.services.media.list(params.page, params.perPage);
    return adminPage(request, reply, 'admin/media/index', 'media', {
      title: t(locale, 'admin.nav.media'),
      result,
      errors,
      size: (bytes: number) => formatBytes(locale, bytes),
      maxSize: MAX_UPLOAD_BYTES / 1024 / 1024,
      links: { pageUrl: (page: number) => withQuery('/admin/media', { page }) },
    }, status);
  };

  app.get('/media', { config: { auth: 'admin' } }, async (request, reply) => library(request, reply, localeFor(app, request)));

  // A form's upload comes back to the library with a message; the editor's script asks for JSON
  // and gets the image, to insert its markdown.
  app.post('/media', { config: { auth: 'admin' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    try {
      const item = await app.services.media.upload(acting(request), uploads.get(request) ?? { bytes: null, name: '' });
      if (wantsJson(request)) return reply.code(201).send({ data: item });
      return done(request, reply, '/admin/media', t(locale, 'media.uploaded', { name: item.name }));
    } catch (error) {
      // In the panel's language, for the script as for the page (the error handler answers
      // scripts outside /api in English).
      const refused = refusal(error, locale);
      if (wantsJson(request)) return reply.code(refused.status).send({ message: refused.message, errors: refused.errors });
      return library(request, reply, locale, refused.errors, refused.status);
    }
  });

  // The confirmation step, and the warning when posts show the image.
  const confirm = async (request: FastifyRequest, reply: FastifyReply, item: MediaItem, status = 200) => {
    const locale = localeFor(app, request);
    return adminPage(request, reply, 'admin/media/delete', 'media', {
      title: t(locale, 'media.delete_title'),
      item,
      posts: await app.services.media.usedBy(item),
    }, status);
  };

  app.get('/media/:id/delete', { config: { auth: 'admin' } }, async (request, reply) => confirm(request, reply, await findOr404(request)));

  app.post('/media/:id/delete', { config: { auth: 'admin' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    const item = await findOr404(request);
    // An image a post shows goes only once the warning was seen: a post made to use it since the
    // page was opened, or a form posted without it, brings the warning back and deletes nothing.
    const used = await app.services.media.usedBy(item);
    if (used.length > 0 && !checked(request, 'confirm_used')) return confirm(request, reply, item, 409);
    await app.services.media.remove(acting(request), item);
    return done(request, reply, '/admin/media', t(locale, 'media.deleted', { name: item.name }));
  });
}
