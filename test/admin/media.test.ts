// /admin/media and /media/<hash>.<ext>: uploads in the panel (each accepted type, the type read
// from the bytes, SVG and disguised files refused, the size limit, metadata removed), the files
// served with year-long immutable caching, the library, deletion with its warning when a post
// shows the image, and who may do any of it (administrators, with the CSRF token).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { MAX_UPLOAD_BYTES } from '../../src/modules/media/media.service.js';
import { buildTestApp, createUser, twoInstances, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { auditRows, decode, fieldError, signedInAdmin, type Admin } from './support.js';

const MARK = 'TESSERA-SECRET-MARK';

/** A small image of `format`, with EXIF (a description holding MARK, a GPS position) where the format keeps it. */
function image(format: 'png' | 'jpeg' | 'webp' | 'gif' | 'avif', color = { r: 200, g: 30, b: 60 }): Promise<Buffer> {
  return sharp({ create: { width: 40, height: 30, channels: 3, background: color } })
    .withExif({ IFD0: { ImageDescription: MARK }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 24/1', GPSLongitudeRef: 'E', GPSLongitude: '2/1 21/1 3/1' } })
    .toFormat(format)
    .toBuffer();
}

type FilePart = { bytes: Buffer; name: string; type?: string };

/** A multipart/form-data body, as a browser's form sends it. */
function multipartBody(fields: Record<string, string>, file: FilePart | null): { payload: Buffer; contentType: string } {
  const boundary = `----tessera${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  if (file !== null) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: ${file.type ?? 'application/octet-stream'}\r\n\r\n`));
    chunks.push(file.bytes, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Posts the upload form of the library (its CSRF token unless `token` says otherwise). */
async function upload(t: { app: FastifyInstance }, client: WebClient, file: FilePart | null, options: { token?: string | null; json?: boolean } = {}): Promise<LightMyRequestResponse> {
  if (client.csrf === null) await client.get('/admin/media');
  const token = options.token === undefined ? client.csrf : options.token;
  const { payload, contentType } = multipartBody(token === null ? {} : { _token: token }, file);
  return t.app.inject({
    method: 'POST',
    url: '/admin/media',
    payload,
    headers: { 'content-type': contentType, cookie: client.cookieHeader(), ...(options.json === true ? { accept: 'application/json' } : {}) },
  });
}

const mediaRows = (t: TestApp) => t.db.kysely.selectFrom('media').selectAll().orderBy('id').execute();

describe('/admin/media uploads', () => {
  let t: TestApp;
  let client: WebClient;
  before(async () => {
    t = await buildTestApp();
    ({ client } = await signedInAdmin(t));
  });
  after(() => t.close());

  const types = [
    { format: 'png', name: 'chart.png', mime: 'image/png', ext: 'png' },
    { format: 'jpeg', name: 'holiday.jpg', mime: 'image/jpeg', ext: 'jpg' },
    { format: 'webp', name: 'banner.webp', mime: 'image/webp', ext: 'webp' },
    { format: 'gif', name: 'loop.gif', mime: 'image/gif', ext: 'gif' },
    { format: 'avif', name: 'photo.avif', mime: 'image/avif', ext: 'avif' },
  ] as const;
  for (const [index, row] of types.entries()) {
    it(`accepts a ${row.format.toUpperCase()} image and serves it as ${row.mime}`, async () => {
      const bytes = await image(row.format, { r: 10 * index, g: 100, b: 150 });
      const response = await upload(t, client, { bytes, name: row.name, type: row.mime });
      assert.equal(response.statusCode, 303, response.body);
      assert.equal(response.headers.location, '/admin/media');
      const stored = (await mediaRows(t)).find((media) => media.name === row.name);
      assert.ok(stored, 'a row for the upload');
      assert.equal(stored.type, row.format);
      assert.equal((await sharp(stored.data).metadata()).format, row.format === 'avif' ? 'heif' : row.format);
      const served = await t.app.inject({ method: 'GET', url: `/media/${stored.hash}.${row.ext}` });
      assert.equal(served.statusCode, 200);
      assert.equal(served.headers['content-type'], row.mime);
      assert.deepEqual(served.rawPayload, Buffer.from(stored.data));
    });
  }

  it('decides the type from the bytes, not the name: a PNG called .jpg is stored and served as a PNG', async () => {
    const bytes = await image('png', { r: 1, g: 2, b: 3 });
    const response = await upload(t, client, { bytes, name: 'not-really.jpg', type: 'image/jpeg' }, { json: true });
    assert.equal(response.statusCode, 201);
    const { data } = response.json() as { data: { url: string; type: string } };
    assert.equal(data.type, 'png');
    assert.match(data.url, /^\/media\/[0-9a-f]{64}\.png$/);
    assert.equal((await t.app.inject({ method: 'GET', url: data.url })).headers['content-type'], 'image/png');
  });

  const refused = [
    { name: 'an SVG (it can hold scripts)', file: { bytes: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>'), name: 'logo.svg', type: 'image/svg+xml' }, message: /SVG images are not accepted/ },
    { name: 'an SVG named .png', file: { bytes: Buffer.from('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="4" height="4" onload="alert(1)"/>'), name: 'logo.png', type: 'image/png' }, message: /SVG images are not accepted/ },
    { name: 'an HTML page named .png', file: { bytes: Buffer.from('<!doctype html><html><body><script>alert(document.cookie)</script></body></html>'), name: 'photo.png', type: 'image/png' }, message: /not a PNG, JPEG, WebP, GIF or AVIF image/ },
    { name: 'a script named .png', file: { bytes: Buffer.from('fetch("/admin/users").then(r => r.text()).then(alert);\n'), name: 'photo.png', type: 'image/png' }, message: /not a PNG, JPEG, WebP, GIF or AVIF image/ },
    { name: 'a PNG signature followed by HTML', file: { bytes: Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('<html><script>alert(1)</script></html>')]), name: 'x.png', type: 'image/png' }, message: /not a PNG, JPEG, WebP, GIF or AVIF image/ },
    { name: 'an empty file', file: { bytes: Buffer.alloc(0), name: 'empty.png', type: 'image/png' }, message: /Choose an image/ },
    { name: 'a form without a file', file: null, message: /Choose an image/ },
  ];
  for (const row of refused) {
    it(`refuses ${row.name} with an inline 422, storing nothing`, async () => {
      const before = (await mediaRows(t)).length;
      const response = await upload(t, client, row.file);
      assert.equal(response.statusCode, 422);
      assert.match(fieldError(response.body, 'file') ?? '', row.message);
      assert.equal((await mediaRows(t)).length, before);
    });
  }

  it('refuses a file over the size limit: an inline 422 on the form, the 422 envelope for the editor script', async () => {
    const before = (await mediaRows(t)).length;
    // A real PNG padded past the limit: the size is refused whatever the content.
    const bytes = Buffer.concat([await image('png'), Buffer.alloc(MAX_UPLOAD_BYTES)]);
    const page = await upload(t, client, { bytes, name: 'huge.png', type: 'image/png' });
    assert.equal(page.statusCode, 422);
    assert.equal(fieldError(page.body, 'file'), 'The image is larger than 10 MB.');
    const json = await upload(t, client, { bytes, name: 'huge.png', type: 'image/png' }, { json: true });
    assert.equal(json.statusCode, 422);
    assert.deepEqual(json.json(), { message: 'The image is larger than 10 MB.', errors: { file: ['The image is larger than 10 MB.'] } });
    // Exactly at the limit is accepted (a real PNG padded to it: trailing bytes after its end are ignored and not kept).
    const atLimit = Buffer.concat([await image('png', { r: 3, g: 3, b: 3 })]);
    const padded = Buffer.concat([atLimit, Buffer.alloc(MAX_UPLOAD_BYTES - atLimit.length)]);
    const accepted = await upload(t, client, { bytes: padded, name: 'at-limit.png' }, { json: true });
    assert.equal(accepted.statusCode, 201, accepted.body);
    assert.ok((accepted.json() as { data: { size: number } }).data.size < 10_000, 'the padding is not kept');
    assert.equal((await mediaRows(t)).length, before + 1);
  });

  it('says why in the language of the reader', async () => {
    const body = multipartBody({ _token: client.csrf ?? '' }, { bytes: Buffer.from('<html></html>'), name: 'a.png' });
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/media',
      payload: body.payload,
      headers: { 'content-type': body.contentType, cookie: client.cookieHeader(), accept: 'application/json', 'accept-language': 'fr' },
    });
    assert.equal(response.statusCode, 422);
    assert.equal((response.json() as { message: string }).message, 'Ce fichier n’est pas une image PNG, JPEG, WebP, GIF ou AVIF.');
  });

  it('removes the metadata (EXIF with its GPS position) from the stored and served bytes', async () => {
    for (const format of ['jpeg', 'png', 'webp', 'avif'] as const) {
      const bytes = await image(format, { r: 77, g: 77, b: format.length });
      const original = await sharp(bytes).metadata();
      assert.ok(original.exif !== undefined && bytes.includes(MARK), `the ${format} fixture carries EXIF`);
      const response = await upload(t, client, { bytes, name: `gps.${format}` }, { json: true });
      assert.equal(response.statusCode, 201);
      const { data } = response.json() as { data: { url: string } };
      const hash = /([0-9a-f]{64})/.exec(data.url)?.[1] ?? '';
      const stored = await t.db.kysely.selectFrom('media').select('data').where('hash', '=', hash).executeTakeFirstOrThrow();
      const storedBytes = Buffer.from(stored.data);
      const metadata = await sharp(storedBytes).metadata();
      assert.equal(metadata.exif, undefined, `no EXIF left in the stored ${format}`);
      assert.equal(metadata.xmp, undefined);
      assert.ok(!storedBytes.includes(MARK) && !storedBytes.includes('GPS'), `no trace of the EXIF block in the ${format}`);
      const served = await t.app.inject({ method: 'GET', url: data.url });
      assert.ok(!served.rawPayload.includes(MARK));
    }
  });

  it('turns a photo by its EXIF orientation before dropping the tag, so it does not show on its side', async () => {
    // 40 × 30 pixels, to be shown turned a quarter (orientation 6): 30 × 40.
    const bytes = await sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 90, g: 10, b: 10 } } }).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    assert.equal((await sharp(bytes).metadata()).orientation, 6);
    const response = await upload(t, client, { bytes, name: 'portrait.jpg' }, { json: true });
    const { data } = response.json() as { data: { url: string; width: number; height: number } };
    assert.deepEqual([data.width, data.height], [30, 40]);
    const served = await sharp((await t.app.inject({ method: 'GET', url: data.url })).rawPayload).metadata();
    assert.deepEqual([served.width, served.height, served.orientation], [30, 40, undefined]);
  });

  it('keeps one entry for the same image uploaded twice, and writes one audit line', async () => {
    const bytes = await image('webp', { r: 5, g: 6, b: 7 });
    const first = await upload(t, client, { bytes, name: 'twice.webp' }, { json: true });
    const second = await upload(t, client, { bytes, name: 'again.webp' }, { json: true });
    assert.equal(first.statusCode, 201);
    assert.equal(second.statusCode, 201);
    assert.equal((first.json() as { data: { url: string } }).data.url, (second.json() as { data: { url: string } }).data.url);
    assert.equal((await mediaRows(t)).filter((row) => row.name === 'twice.webp' || row.name === 'again.webp').length, 1);
    const lines = (await auditRows(t)).filter((line) => line.action === 'media.uploaded' && line.subject_label === 'twice.webp');
    assert.equal(lines.length, 1);
  });

  it('lists the uploads in the library with their markdown', async () => {
    const response = await client.get('/admin/media');
    assert.equal(response.statusCode, 200);
    const row = (await mediaRows(t)).find((media) => media.name === 'chart.png');
    assert.ok(row);
    const url = `/media/${row.hash}.png`;
    assert.ok(response.body.includes(`<img src="${url}"`));
    assert.ok(decode(response.body).includes(`value="![chart](${url})"`));
  });
});

describe('/media/<hash>.<ext>', () => {
  let t: TestApp;
  let url: string;
  let hash: string;
  before(async () => {
    t = await buildTestApp();
    const { client } = await signedInAdmin(t);
    const response = await upload(t, client, { bytes: await image('png'), name: 'served.png' }, { json: true });
    url = (response.json() as { data: { url: string } }).data.url;
    hash = /([0-9a-f]{64})/.exec(url)?.[1] ?? '';
  });
  after(() => t.close());

  it('is cached for a year as immutable, tagged by its hash, and sets no cookie', async () => {
    const response = await t.app.inject({ method: 'GET', url });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(response.headers.etag, `"${hash}"`);
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
    assert.equal(response.headers['set-cookie'], undefined);
    const head = await t.app.inject({ method: 'HEAD', url });
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    assert.equal(head.headers['cache-control'], 'public, max-age=31536000, immutable');
  });

  it('answers a revalidation with 304 and no body', async () => {
    const response = await t.app.inject({ method: 'GET', url, headers: { 'if-none-match': `"${hash}"` } });
    assert.equal(response.statusCode, 304);
    assert.equal(response.body, '');
  });

  const missing = [
    { name: 'another extension than its type', path: () => `/media/${hash}.jpg` },
    { name: 'an unknown hash', path: () => `/media/${'0'.repeat(64)}.png` },
    { name: 'an upper-case hash', path: () => `/media/${hash.toUpperCase()}.png` },
    { name: 'a name that is not a hash', path: () => '/media/..%2F..%2Fetc%2Fpasswd' },
  ];
  for (const row of missing) {
    it(`is a 404 for ${row.name}`, async () => {
      const response = await t.app.inject({ method: 'GET', url: row.path() });
      assert.equal(response.statusCode, 404);
      assert.equal(response.headers['cache-control']?.includes('immutable') ?? false, false);
    });
  }

  it('shows in a published post, under a CSP that keeps img-src to the site', async () => {
    const admin = await t.app.services.users.findByEmail((await auditRows(t))[0]!.actor_email);
    await t.app.services.posts.create(admin?.id ?? null, { title: 'With a picture', slug: 'with-a-picture', locale: 'en', status: 'published', body: `Look:\n\n![A red square](${url})\n` });
    const response = await t.app.inject({ method: 'GET', url: '/blog/with-a-picture' });
    assert.equal(response.statusCode, 200);
    assert.ok(response.body.includes(`<img src="${url}" alt="A red square"`), 'the post shows the image');
    assert.match(String(response.headers['content-security-policy']), /img-src 'self' data:;/);
  });
});

describe('images with several instances', () => {
  it('serves through one instance an image uploaded through another, and deletes it for both', async () => {
    const { a, b, close } = await twoInstances();
    try {
      const admin = await createUser(a, { admin: true });
      const client = new WebClient(a);
      await client.adminLogin(admin.email, admin.plainPassword);
      const response = await upload({ app: a }, client, { bytes: await image('jpeg'), name: 'shared.jpg' }, { json: true });
      assert.equal(response.statusCode, 201);
      const { id, url } = (response.json() as { data: { id: number; url: string } }).data;
      const served = await b.inject({ method: 'GET', url });
      assert.equal(served.statusCode, 200);
      assert.equal(served.headers['content-type'], 'image/jpeg');
      await client.get(`/admin/media/${id}/delete`);
      assert.equal((await client.post(`/admin/media/${id}/delete`)).statusCode, 303);
      assert.equal((await b.inject({ method: 'GET', url })).statusCode, 404);
    } finally {
      await close();
    }
  });
});

describe('/admin/media deletion', () => {
  let t: TestApp;
  let client: WebClient;
  let admin: Admin;
  before(async () => {
    t = await buildTestApp();
    ({ admin, client } = await signedInAdmin(t));
  });
  after(() => t.close());

  const uploaded = async (name: string, color: { r: number; g: number; b: number }) => {
    const response = await upload(t, client, { bytes: await image('png', color), name }, { json: true });
    return (response.json() as { data: { id: number; url: string } }).data;
  };

  it('deletes an image no post shows after the confirmation step; its URL is then a 404', async () => {
    const item = await uploaded('unused.png', { r: 1, g: 1, b: 1 });
    const page = await client.get(`/admin/media/${item.id}/delete`);
    assert.equal(page.statusCode, 200);
    assert.ok(!page.body.includes('confirm_used'));
    const response = await client.post(`/admin/media/${item.id}/delete`);
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/admin/media');
    assert.equal((await mediaRows(t)).some((row) => row.id === item.id), false);
    assert.equal((await t.app.inject({ method: 'GET', url: item.url })).statusCode, 404);
    const line = (await auditRows(t))[0];
    assert.equal(line?.action, 'media.deleted');
    assert.equal(line?.subject_label, 'unused.png');
  });

  it('warns before deleting an image a post shows, naming the post, and deletes only once confirmed', async () => {
    const item = await uploaded('used.png', { r: 2, g: 2, b: 2 });
    const post = await t.app.services.posts.create(admin.id, { title: 'Draft with the image', locale: 'fr', status: 'draft', body: `Intro\n\n![used](${item.url})` });
    const page = await client.get(`/admin/media/${item.id}/delete`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Posts show this image \(1\)/);
    assert.ok(page.body.includes(`<a href="/admin/posts/${post.id}/edit">Draft with the image</a>`));
    assert.ok(page.body.includes('name="confirm_used" value="1"'));

    // Posted without having seen the warning: the warning again, nothing deleted.
    const unwarned = await client.post(`/admin/media/${item.id}/delete`);
    assert.equal(unwarned.statusCode, 409);
    assert.match(unwarned.body, /Posts show this image/);
    assert.equal((await mediaRows(t)).some((row) => row.id === item.id), true);

    const confirmed = await client.post(`/admin/media/${item.id}/delete`, { confirm_used: '1' });
    assert.equal(confirmed.statusCode, 303);
    assert.equal((await mediaRows(t)).some((row) => row.id === item.id), false);
  });

  it('keeps the images of an administrator whose account is deleted', async () => {
    const other = await signedInAdmin(t);
    const response = await upload(t, other.client, { bytes: await image('gif', { r: 4, g: 4, b: 4 }), name: 'left-behind.gif' }, { json: true });
    const { id, url } = (response.json() as { data: { id: number; url: string } }).data;
    await t.app.services.accountDeletion.erase(other.admin);
    const row = await t.db.kysely.selectFrom('media').select('uploaded_by').where('id', '=', id).executeTakeFirst();
    assert.deepEqual(row, { uploaded_by: null });
    assert.equal((await t.app.inject({ method: 'GET', url })).statusCode, 200);
  });

  it('is a 404 for an image that does not exist', async () => {
    assert.equal((await client.get('/admin/media/999999/delete')).statusCode, 404);
    assert.equal((await client.post('/admin/media/999999/delete')).statusCode, 404);
  });
});

describe('/admin/media access', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  it('refuses an upload without the CSRF token (419), storing nothing', async () => {
    const { client } = await signedInAdmin(t);
    const withoutToken = await upload(t, client, { bytes: await image('png'), name: 'forged.png' }, { token: null });
    assert.equal(withoutToken.statusCode, 419);
    const wrongToken = await upload(t, client, { bytes: await image('png'), name: 'forged.png' }, { token: 'not-a-token' });
    assert.equal(wrongToken.statusCode, 419);
    assert.equal((await mediaRows(t)).length, 0);
  });

  it('refuses a deletion without the CSRF token', async () => {
    const { client } = await signedInAdmin(t);
    const response = await upload(t, client, { bytes: await image('png', { r: 9, g: 9, b: 9 }), name: 'kept.png' }, { json: true });
    const { id } = (response.json() as { data: { id: number } }).data;
    assert.equal((await client.post(`/admin/media/${id}/delete`, {}, { token: false })).statusCode, 419);
    assert.equal((await mediaRows(t)).some((row) => row.id === id), true);
    await t.db.kysely.deleteFrom('media').execute();
  });

  it('answers a body that is not well-formed multipart with a 400, never a 500, for an administrator and a guest', async () => {
    const { client: admin } = await signedInAdmin(t);
    const guest = new WebClient(t.app);
    await guest.get('/login');
    await upload(t, admin, { bytes: await image('png', { r: 4, g: 4, b: 4 }), name: 'kept.png' }, { json: true });
    const before = await mediaRows(t);
    // A form body under a multipart type, a body cut short, nothing after the boundary line.
    const bodies = ['_token=x&a=b', '------x\r\nContent-Disposition: form-data; name="_token"\r\n\r\nabc', '------x\r\n'];
    for (const client of [admin, guest]) {
      for (const url of ['/admin/media', `/admin/media/${before[0]!.id}/delete`]) {
        for (const payload of bodies) {
          for (const accept of ['text/html', 'application/json']) {
            const response = await t.app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'multipart/form-data; boundary=----x', accept, cookie: client.cookieHeader() } });
            assert.equal(response.statusCode, 400, `${url} ${JSON.stringify(payload)}: ${response.body.slice(0, 200)}`);
            if (accept === 'application/json') assert.deepEqual(response.json(), { message: 'The request could not be understood.', errors: {} });
          }
        }
      }
    }
    assert.deepEqual(await mediaRows(t), before);
    await t.db.kysely.deleteFrom('media').execute();
  });

  it('sends a signed-in user who is not an administrator, and a guest, to the panel login', async () => {
    const user = await createUser(t.app, { email: 'reader@example.com', password: 'reader password 1' });
    const site = new WebClient(t.app);
    const login = await site.submit('/login', '/login', { email: user.email, password: 'reader password 1' });
    assert.equal(login.statusCode, 303);
    await site.get('/dashboard');
    for (const client of [site, new WebClient(t.app)]) {
      assert.equal((await client.get('/admin/media')).headers.location, '/admin/login');
      if (client.csrf === null) await client.get('/login');
      const response = await upload(t, client, { bytes: await image('png'), name: 'intruder.png' });
      assert.equal(response.statusCode, 302);
      assert.equal(response.headers.location, '/admin/login');
    }
    assert.equal((await mediaRows(t)).length, 0);
  });
});
