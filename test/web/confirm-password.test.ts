// Password confirmation before sensitive actions (Laravel's password.confirm): the page, the
// throttle, the PASSWORD_TIMEOUT window and the preHandler every sensitive route uses.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { requirePasswordConfirmed } from '../../src/http/web/confirm-password.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient, fieldError } from '../support/client.js';
import { login, sessionIdOf, sessionRow } from './support.js';

const PASSWORD = 'confirm-me-please-1';

// A sensitive page and action of the test's own, behind the same preHandler as the real ones.
async function sensitiveRoutes(app: FastifyInstance): Promise<void> {
  app.get('/test/sensitive', { config: { auth: 'public' }, preHandler: requirePasswordConfirmed(app) }, async () => 'sensitive page');
  app.post('/test/sensitive', { config: { auth: 'public' }, preHandler: requirePasswordConfirmed(app) }, async () => 'sensitive action');
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

  it('sends a form post back to the page the form was on, and answers a script with 423', async () => {
    const client = await signedIn('post@example.com');
    await client.get('/security');
    const posted = await client.post('/test/sensitive', {}, { headers: { referer: `${t.config.appUrl}/security?tab=x` } });
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

  it('never sends the browser to another site after confirming', async () => {
    const client = await signedIn('offsite@example.com');
    await client.get('/security');
    await client.post('/test/sensitive', {}, { headers: { referer: 'https://evil.example/phish' } });
    await client.get('/user/confirm-password');
    const confirmed = await client.post('/user/confirm-password', { password: PASSWORD });
    assert.equal(confirmed.headers.location, '/security');
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
