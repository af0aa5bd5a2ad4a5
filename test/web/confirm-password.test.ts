// Password confirmation before sensitive actions (Laravel's password.confirm): the page, the
// throttle, the PASSWORD_TIMEOUT window, the preHandler every sensitive route uses, and the
// form post it holds and sends again once confirmed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { CONTINUE_PATH, requirePasswordConfirmed } from '../../src/http/web/confirm-password.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient, fieldError } from '../support/client.js';
import { continuation, login, sessionIdOf, sessionRow } from './support.js';

const PASSWORD = 'confirm-me-please-1';

// A sensitive page and action of the test's own, behind the same preHandler as the real ones.
async function sensitiveRoutes(app: FastifyInstance): Promise<void> {
  app.get('/test/sensitive', { config: { auth: 'user' }, preHandler: requirePasswordConfirmed(app) }, async () => 'sensitive page');
  app.post('/test/sensitive', { config: { auth: 'user' }, preHandler: requirePasswordConfirmed(app) }, async (request) => {
    const { note } = (request.body ?? {}) as { note?: string };
    return note === undefined ? 'sensitive action' : `sensitive action: ${note}`;
  });
}


describe('password confirmation', () => {
  let t: TestApp;

  before(async () => {
    t = await buildTestApp({ PASSWORD_TIMEOUT: '60' }, { browserRoutes: sensitiveRoutes });
  });
  after(() => t.close());

  const signedIn = async (email: string) => {
    await createUser(t.app, { email, password: PASSWORD });
    const client = new WebClient(t.app);
    await login(client, email, PASSWORD);
    return client;
  };

  it('sends a visitor who is not signed in to the login page', async () => {
    const response = await new WebClient(t.app).get('/user/confirm-password');
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, '/login');
  });

  it('sends a sensitive page to the confirmation first, then back to it', async () => {
    const client = await signedIn('back@example.com');
    const asked = await client.get('/test/sensitive');
    assert.equal(asked.statusCode, 302);
    assert.equal(asked.headers.location, '/user/confirm-password');
    const page = await client.get('/user/confirm-password');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /autocomplete="current-password"/);
    const confirmed = await client.post('/user/confirm-password', { password: PASSWORD });
    assert.equal(confirmed.statusCode, 303);
    assert.equal(confirmed.headers.location, '/test/sensitive');
    assert.equal((await client.get('/test/sensitive')).body, 'sensitive page');
  });

  it('sends a form post it does not hold back to the page the form was on, and answers a script with 423', async () => {
    const client = await signedIn('post@example.com');
    await client.get('/security');
    const posted = await client.post('/test/sensitive', { code: '123456' }, { headers: { referer: `${t.config.appUrl}/security?tab=x` } });
    assert.equal(posted.statusCode, 303);
    assert.equal(posted.headers.location, '/user/confirm-password');
    await client.get('/user/confirm-password');
    const confirmed = await client.post('/user/confirm-password', { password: PASSWORD });
    assert.equal(confirmed.headers.location, '/security?tab=x');
    const json = await signedIn('json@example.com');
    await json.get('/security');
    const refused = await json.postJson('/test/sensitive', {});
    assert.equal(refused.statusCode, 423);
    assert.equal(JSON.parse(refused.body).message, 'Password confirmation required.');
  });

  it('sends a held form post again once confirmed, its fields on a page with a fresh CSRF token', async () => {
    const client = await signedIn('held@example.com');
    await client.get('/security');
    const posted = await client.post('/test/sensitive', { note: 'a "quoted" <note>' }, { headers: { referer: `${t.config.appUrl}/security` } });
    assert.equal(posted.headers.location, '/user/confirm-password');
    await client.get('/user/confirm-password');
    const confirmed = await client.post('/user/confirm-password', { password: PASSWORD });
    assert.equal(confirmed.headers.location, CONTINUE_PATH);
    const page = await client.follow(confirmed);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /src="\/assets\/confirm-continue.js"/);
    const form = continuation(page.body);
    assert.deepEqual(form, { action: '/test/sensitive', fields: { note: 'a "quoted" <note>' }, cancel: '/security' });
    const sent = await client.post(form.action, form.fields);
    assert.equal(sent.statusCode, 200);
    assert.equal(sent.body, 'sensitive action: a "quoted" <note>');
    // Used once: the page again goes back to where the form was.
    const again = await client.get(CONTINUE_PATH);
    assert.equal(again.statusCode, 302);
    assert.equal(again.headers.location, '/security');
  });

  it('holds no password, code or token: such a post goes back to its page, and the session row never holds it', async () => {
    const client = await signedIn('secret@example.com');
    await client.get('/security');
    for (const name of ['new_password', 'code', 'recovery_secret', 'api_token']) {
      await client.post('/test/sensitive', { [name]: 'do-not-keep-me-1' }, { headers: { referer: `${t.config.appUrl}/security?held=${name}` } });
      const row = await sessionRow(t.db, sessionIdOf(client));
      assert.doesNotMatch(row!.payload, /do-not-keep-me/, name);
    }
    await client.get('/user/confirm-password');
    const confirmed = await client.post('/user/confirm-password', { password: PASSWORD });
    assert.equal(confirmed.headers.location, '/security?held=api_token');
  });

  it('sends nothing after a later visit of the confirmation page, a stale hold or without the confirmation', async () => {
    const client = await signedIn('later@example.com');
    await client.get('/security');
    // Without a confirmation, the continuation page asks for it.
    await client.post('/test/sensitive', { note: 'x' }, { headers: { referer: `${t.config.appUrl}/security` } });
    const early = await client.get(CONTINUE_PATH);
    assert.equal(early.statusCode, 302);
    assert.equal(early.headers.location, '/user/confirm-password');
    // The detour's page was left, then the confirmation page opened again (a link, the history).
    await client.get('/user/confirm-password');
    await client.get('/user/confirm-password');
    const confirmed = await client.post('/user/confirm-password', { password: PASSWORD });
    assert.equal(confirmed.headers.location, '/security');
    assert.equal((await client.get(CONTINUE_PATH)).headers.location, '/security');

    // A hold older than ten minutes is dropped.
    const stale = await signedIn('stale@example.com');
    await stale.get('/security');
    await stale.post('/test/sensitive', { note: 'x' }, { headers: { referer: `${t.config.appUrl}/security?stale` } });
    await stale.get('/user/confirm-password');
    const id = sessionIdOf(stale)!;
    const payload = JSON.parse((await sessionRow(t.db, id))!.payload) as { confirmAction: { at: number } };
    payload.confirmAction.at -= 11 * 60_000;
    await t.db.kysely.updateTable('sessions').set({ payload: JSON.stringify(payload) }).where('id', '=', id).execute();
    const late = await stale.post('/user/confirm-password', { password: PASSWORD });
    assert.equal(late.headers.location, '/security?stale');
  });

  it('never sends the browser to another site after confirming', async () => {
    const client = await signedIn('offsite@example.com');
    await client.get('/security');
    await client.post('/test/sensitive', { code: '123456' }, { headers: { referer: 'https://evil.example/phish' } });
    await client.get('/user/confirm-password');
    const confirmed = await client.post('/user/confirm-password', { password: PASSWORD });
    assert.equal(confirmed.headers.location, '/security');
    // Nor from the continuation page's Cancel: the held post's own page, or the security page.
    const held = await signedIn('offsite-held@example.com');
    await held.get('/security');
    await held.post('/test/sensitive', { note: 'x' }, { headers: { referer: 'https://evil.example/phish' } });
    await held.get('/user/confirm-password');
    await held.post('/user/confirm-password', { password: PASSWORD });
    const page = await held.get(CONTINUE_PATH);
    assert.match(page.body, /<a href="\/security">Cancel<\/a>/);
  });

  it('refuses a wrong password inline with 422 and confirms nothing', async () => {
    const client = await signedIn('wrong@example.com');
    await client.get('/user/confirm-password');
    const response = await client.post('/user/confirm-password', { password: 'not-the-password' });
    assert.equal(response.statusCode, 422);
    assert.equal(fieldError(response.body, 'password'), 'The provided password is incorrect.');
    assert.equal((await client.get('/test/sensitive')).statusCode, 302);
    const row = await sessionRow(t.db, sessionIdOf(client));
    assert.equal(JSON.parse(row!.payload).passwordConfirmedAt, undefined);
  });

  it('says so in French to a French visitor', async () => {
    await createUser(t.app, { email: 'fr@example.com', password: PASSWORD });
    const client = new WebClient(t.app, { headers: { 'accept-language': 'fr' } });
    await login(client, 'fr@example.com', PASSWORD);
    const page = await client.get('/user/confirm-password');
    assert.match(page.body, /Confirmez votre mot de passe/);
    const response = await client.post('/user/confirm-password', { password: 'pas-le-bon' });
    assert.equal(fieldError(response.body, 'password'), 'Le mot de passe fourni est incorrect.');
  });

  it('stops checking after five wrong passwords a minute (429), even for the right one', async () => {
    const client = await signedIn('throttle@example.com');
    await client.get('/user/confirm-password');
    for (let i = 0; i < 5; i += 1) assert.equal((await client.post('/user/confirm-password', { password: `wrong-${i}-password` })).statusCode, 422);
    const limited = await client.post('/user/confirm-password', { password: PASSWORD });
    assert.equal(limited.statusCode, 429);
    assert.ok(Number(limited.headers['retry-after']) > 0);
    assert.equal((await client.get('/test/sensitive')).statusCode, 302, 'not confirmed');
  });

  it('asks again once PASSWORD_TIMEOUT seconds have passed', async () => {
    const client = await signedIn('timeout@example.com');
    await client.get('/user/confirm-password');
    await client.post('/user/confirm-password', { password: PASSWORD });
    assert.equal((await client.get('/test/sensitive')).statusCode, 200);
    // Move the confirmation 61 seconds into the past, as time passing would.
    const id = sessionIdOf(client)!;
    const row = await sessionRow(t.db, id);
    const payload = JSON.parse(row!.payload) as { passwordConfirmedAt: number };
    payload.passwordConfirmedAt -= 61_000;
    await t.db.kysely.updateTable('sessions').set({ payload: JSON.stringify(payload) }).where('id', '=', id).execute();
    assert.equal((await client.get('/test/sensitive')).statusCode, 302);
  });

  it('confirms over JSON with 204 and answers a wrong password with the 422 envelope', async () => {
    const client = await signedIn('spa@example.com');
    await client.get('/user/confirm-password');
    const wrong = await client.postJson('/user/confirm-password', { password: 'nope-nope-nope' });
    assert.equal(wrong.statusCode, 422);
    assert.deepEqual(JSON.parse(wrong.body).errors, { password: ['The provided password is incorrect.'] });
    const right = await client.postJson('/user/confirm-password', { password: PASSWORD });
    assert.equal(right.statusCode, 204);
  });
});
