// GET/POST /register: the rules, the login that follows, and the verification mail when
// MUST_VERIFY_EMAIL is on (delivered to a real SMTP server on loopback).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUser, type TestApp } from '../helpers.js';
import { WebClient, fieldError, fieldValue } from '../support/client.js';
import type { MailServer } from './mail-server.js';
import { appWithMail, closeAppWithMail, isLoggedIn } from './support.js';

const GOOD = { name: 'Katherine Johnson', email: 'katherine@example.com', password: 'orbital-mechanics-62', password_confirmation: 'orbital-mechanics-62' };

describe('registration', () => {
  let mail: MailServer;
  let t: TestApp;

  before(async () => {
    ({ t, mail } = await appWithMail());
    await createUser(t.app, { email: 'taken@example.com' });
  });
  after(() => closeAppWithMail(t, mail));

  const register = async (form: Record<string, string>, client = new WebClient(t.app)) => {
    await client.get('/register');
    return { client, response: await client.post('/register', form) };
  };

  it('shows the form with name, email, password and confirmation fields', async () => {
    const response = await new WebClient(t.app).get('/register');
    assert.equal(response.statusCode, 200);
    for (const [field, autocomplete] of [['name', 'name'], ['email', 'email'], ['password', 'new-password'], ['password_confirmation', 'new-password']]) {
      assert.match(response.body, new RegExp(`<label for="field-${field}">`));
      assert.match(response.body, new RegExp(`id="field-${field}"[^>]*autocomplete="${autocomplete}"`));
    }
  });

  it('creates an unverified account, logs it in and answers 303 to /dashboard', async () => {
    const { client, response } = await register(GOOD);
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/dashboard');
    assert.equal(await isLoggedIn(client), true);
    const user = await t.app.services.users.findByEmail(GOOD.email);
    assert.equal(user?.name, 'Katherine Johnson');
    assert.equal(user?.email_verified_at, null);
    assert.ok(user?.password?.startsWith('$argon2id$'));
  });

  it('sends no verification mail when verification is off', async () => {
    await register({ ...GOOD, email: 'no-mail@example.com' });
    await t.app.services.mail.settled();
    assert.deepEqual(mail.to('no-mail@example.com'), []);
  });

  const invalid: { name: string; form: Record<string, string>; errors: Record<string, string> }[] = [
    { name: 'nothing at all', form: {}, errors: { name: 'The name field is required.', email: 'The email field is required.', password: 'The password field is required.' } },
    { name: 'a malformed email', form: { ...GOOD, email: 'katherine' }, errors: { email: 'The email field must be a valid email address.' } },
    { name: 'a taken email, whatever its case', form: { ...GOOD, email: 'TAKEN@example.com' }, errors: { email: 'The email has already been taken.' } },
    { name: 'a password under 8 characters', form: { ...GOOD, password: 'short1', password_confirmation: 'short1' }, errors: { password: 'The password field must be at least 8 characters.' } },
    { name: 'a confirmation that differs', form: { ...GOOD, password_confirmation: 'something-else' }, errors: { password: 'The password field confirmation does not match.' } },
    { name: 'a common password', form: { ...GOOD, password: 'password123', password_confirmation: 'password123' }, errors: { password: 'The password is too common; choose a less guessable one.' } },
    { name: 'a missing name with a taken email and a short password', form: { email: 'taken@example.com', password: 'short', password_confirmation: 'short' }, errors: { name: 'The name field is required.', email: 'The email has already been taken.', password: 'The password field must be at least 8 characters.' } },
    { name: 'a name over 255 characters', form: { ...GOOD, name: 'x'.repeat(256) }, errors: { name: 'The name field must not be greater than 255 characters.' } },
  ];
  for (const c of invalid) {
    it(`refuses ${c.name} with 422, every error inline and no account`, async () => {
      const before = await t.db.kysely.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const { client, response } = await register(c.form);
      assert.equal(response.statusCode, 422);
      for (const [field, message] of Object.entries(c.errors)) assert.equal(fieldError(response.body, field), message, field);
      const afterCount = await t.db.kysely.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      assert.equal(Number(afterCount.n), Number(before.n));
      assert.equal(await isLoggedIn(client), false);
    });
  }

  it('keeps the typed name and email, never the password', async () => {
    const { response } = await register({ ...GOOD, email: 'keep@example.com', password_confirmation: 'nope-nope-nope' });
    assert.equal(fieldValue(response.body, 'name'), GOOD.name);
    assert.equal(fieldValue(response.body, 'email'), 'keep@example.com');
    assert.ok(!response.body.includes(GOOD.password));
  });

  it('answers French validation messages with French field names', async () => {
    const client = new WebClient(t.app, { headers: { 'accept-language': 'fr' } });
    const { response } = await register({ ...GOOD, email: 'taken@example.com', password: 'court', password_confirmation: 'court' }, client);
    assert.equal(fieldError(response.body, 'email'), "La valeur du champ adresse e-mail est déjà utilisée.");
    assert.equal(fieldError(response.body, 'password'), 'Le champ mot de passe doit contenir au moins 8 caractères.');
  });
});

describe('registration with MUST_VERIFY_EMAIL=true', () => {
  let mail: MailServer;
  let t: TestApp;

  before(async () => {
    ({ t, mail } = await appWithMail({ MUST_VERIFY_EMAIL: 'true' }));
  });
  after(() => closeAppWithMail(t, mail));

  it('mails a verification link to the new address', async () => {
    const client = new WebClient(t.app);
    await client.get('/register');
    const response = await client.post('/register', { ...GOOD, email: 'verify-me@example.com' });
    assert.equal(response.statusCode, 303);
    await t.app.services.mail.settled();
    const [message] = mail.to('verify-me@example.com');
    assert.ok(message, 'a mail was delivered');
    assert.equal(message.subject, 'Verify email address');
    assert.match(message.text, /http:\/\/localhost:3000\/email\/verify\/\d+\/[0-9a-f]{40}\?expires=\d+&signature=[0-9a-f]{64}/);
  });

  it('mails in the language the visitor registered in', async () => {
    const client = new WebClient(t.app, { headers: { 'accept-language': 'fr' } });
    await client.get('/register');
    await client.post('/register', { ...GOOD, email: 'francais@example.com' });
    await t.app.services.mail.settled();
    const [message] = mail.to('francais@example.com');
    assert.equal(message?.subject, "Vérification de l'adresse e-mail");
    assert.match(message?.text ?? '', /Veuillez cliquer sur le bouton ci-dessous/);
  });
});
