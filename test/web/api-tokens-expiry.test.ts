// Issue 28 §8 on /user/api-tokens: a token may be given an expiry date of its own (a day, lasting
// to its end in UTC, cut to the global lifetime within the last day it reaches), never later than
// SANCTUM_EXPIRATION allows (an inline error, in the reader's language); the list shows it; and the
// API refuses the token with 401 from that moment.
import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { bearer, buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient, fieldError, fieldValue } from '../support/client.js';
import { login, mainOf } from './support.js';

const PAGE = '/user/api-tokens';
const DAY = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const startOf = (day: string) => Date.parse(`${day}T00:00:00Z`);

/** The date field's attributes. */
function dateField(html: string): Record<string, string> {
  const tag = /<input id="field-expires_at"[^>]*>/.exec(html)?.[0] ?? '';
  return Object.fromEntries([...tag.matchAll(/ ([a-z-]+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}

/** The expiry cell of each listed token: the datetime it shows, or null for "Never". */
function listedExpiries(html: string): (string | null)[] {
  return [...html.matchAll(/<tr data-token-id="\d+">[\s\S]*?<\/tr>/g)].map((row) => {
    const cells = [...row[0].matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)];
    return /<time datetime="([^"]+)"/.exec(cells[4]?.[1] ?? '')?.[1] ?? null;
  });
}

function suite(name: string, env: Record<string, string>, lifetimeDays: number | null) {
  describe(name, () => {
    let t: TestApp;
    let counter = 0;
    before(async () => {
      t = await buildTestApp(env);
    });
    after(() => t.close());

    const loggedIn = async () => {
      counter += 1;
      const user = await createUser(t.app, { email: `expiry-page-${counter}@example.com`, password: 'expiry-page-password' });
      const client = new WebClient(t.app);
      await login(client, user.email, 'expiry-page-password');
      await client.get(PAGE);
      return { user, client };
    };
    const rowsOf = (userId: number) => t.db.kysely.selectFrom('personal_access_tokens').select(['id', 'expires_at', 'created_at']).where('user_id', '=', userId).orderBy('id').execute();

    it('offers an optional date field from today to the last day allowed, labelled and explained', async () => {
      const { client } = await loggedIn();
      const page = await client.get(PAGE);
      const field = dateField(page.body);
      assert.equal(field.type, 'date');
      assert.equal(field.name, 'expires_at');
      assert.equal(field.min, dayOf(Date.now()));
      assert.equal(field.max, lifetimeDays === null ? undefined : dayOf(Date.now() + lifetimeDays * DAY - 1));
      assert.equal(field['aria-describedby'], 'field-expires_at-hint');
      assert.match(mainOf(page.body), /<label for="field-expires_at">Expiry date \(optional\)<\/label>/);
      assert.match(mainOf(page.body), lifetimeDays === null ? /stops working at the end of this day \(UTC\)\. Leave it empty for no date of its own\./ : /tokens on this service last at most until/);
    });

    it('stores the end of the chosen day (UTC) and lists it as the expiry', async () => {
      const { user, client } = await loggedIn();
      const tomorrow = dayOf(Date.now() + DAY);
      const response = await client.post(PAGE, { name: 'dated', expires_at: tomorrow });
      assert.equal(response.statusCode, 303, response.body.slice(0, 400));
      const [row] = await rowsOf(user.id);
      const end = startOf(tomorrow) + DAY;
      const expected = lifetimeDays === null ? end : Math.min(end, Date.parse(row!.created_at) + lifetimeDays * DAY);
      assert.equal(Date.parse(row!.expires_at ?? ''), expected);
      assert.deepEqual(listedExpiries((await client.follow(response)).body), [new Date(expected).toISOString()]);
    });

    it('accepts the last day offered, cut to the end of the global lifetime within it', async (context) => {
      if (lifetimeDays === null) return context.skip('no last day without a global lifetime');
      const { user, client } = await loggedIn();
      const last = dateField((await client.get(PAGE)).body).max ?? '';
      assert.equal((await client.post(PAGE, { name: 'last day', expires_at: last })).statusCode, 303);
      const [row] = await rowsOf(user.id);
      const lifetimeEnd = Date.parse(row!.created_at) + lifetimeDays * DAY;
      assert.ok(Math.abs(Date.parse(row!.expires_at ?? '') - lifetimeEnd) < 1000, `${row!.expires_at} is the lifetime's end`);
      assert.ok(Date.parse(row!.expires_at ?? '') < startOf(last) + DAY);
    });

    it('answers a JSON request with the expiry it stored, and its errors in the envelope', async () => {
      const { user, client } = await loggedIn();
      const tomorrow = dayOf(Date.now() + DAY);
      const created = await client.postJson(PAGE, { name: 'json', expires_at: tomorrow });
      assert.equal(created.statusCode, 201, created.body);
      const [row] = await rowsOf(user.id);
      assert.equal((created.json() as { expires_at: string }).expires_at, row!.expires_at);
      const refused = await client.postJson(PAGE, { name: 'json', expires_at: dayOf(Date.now() - DAY) });
      assert.equal(refused.statusCode, 422);
      assert.deepEqual(refused.json(), { message: 'The expiry date must be in the future.', errors: { expires_at: ['The expiry date must be in the future.'] } });
    });

    it('makes a token without a date of its own when the field is left empty', async () => {
      const { user, client } = await loggedIn();
      assert.equal((await client.post(PAGE, { name: 'undated', expires_at: '' })).statusCode, 303);
      const [row] = await rowsOf(user.id);
      if (lifetimeDays === null) assert.equal(row!.expires_at, null);
      else assert.equal(Date.parse(row!.expires_at ?? '') - Date.parse(row!.created_at), lifetimeDays * DAY);
      assert.deepEqual(listedExpiries((await client.get(PAGE)).body), [lifetimeDays === null ? null : new Date(Date.parse(row!.expires_at ?? '')).toISOString()]);
    });

    const refusals: { name: string; day: () => string; en: RegExp; fr: RegExp; only?: 'limited' }[] = [
      { name: 'a day past', day: () => dayOf(Date.now() - DAY), en: /^The expiry date must be in the future\.$/, fr: /^La date d’expiration doit être dans le futur\.$/ },
      { name: 'a day that does not exist', day: () => '2030-02-30', en: /^The expiry date field must be a valid date\.$/, fr: /^Le champ date d’expiration doit être une date valide\.$/ },
      { name: 'not a day', day: () => 'next week', en: /^The expiry date field must be a valid date\.$/, fr: /^Le champ date d’expiration doit être une date valide\.$/ },
      {
        name: 'the day after the last one allowed',
        day: () => dayOf(Date.now() + (lifetimeDays ?? 0) * DAY + DAY),
        en: /^The expiry date is later than tokens on this service may last\.$/,
        fr: /^La date d’expiration dépasse la durée maximale des jetons de ce service\.$/,
        only: 'limited',
      },
    ];
    for (const refusal of refusals) {
      if (refusal.only === 'limited' && lifetimeDays === null) continue;
      it(`refuses ${refusal.name} with an inline error, in English and French, keeping what was typed and making no token`, async () => {
        const { user, client } = await loggedIn();
        const day = refusal.day();
        const response = await client.post(PAGE, { name: 'refused', expires_at: day });
        assert.equal(response.statusCode, 422);
        assert.match(fieldError(response.body, 'expires_at') ?? '', refusal.en);
        assert.equal(dateField(response.body)['aria-invalid'], 'true');
        assert.equal(dateField(response.body)['aria-describedby'], 'field-expires_at-hint field-expires_at-error');
        assert.equal(fieldValue(response.body, 'expires_at'), day);
        assert.equal(fieldValue(response.body, 'name'), 'refused');
        client.cookies.set('locale', 'fr');
        await client.get(PAGE);
        const french = await client.post(PAGE, { name: 'refusé', expires_at: day });
        assert.equal(french.statusCode, 422);
        assert.match(fieldError(french.body, 'expires_at') ?? '', refusal.fr);
        assert.deepEqual(await rowsOf(user.id), []);
      });
    }

    it('shows the name and the date errors at once', async () => {
      const { client } = await loggedIn();
      const response = await client.post(PAGE, { name: '', expires_at: dayOf(Date.now() - DAY) });
      assert.equal(response.statusCode, 422);
      assert.ok(fieldError(response.body, 'name'));
      assert.ok(fieldError(response.body, 'expires_at'));
    });

    it("lets the API use the token until the end of its day and refuses it with 401 from then on", async () => {
      const { client } = await loggedIn();
      const today = dayOf(Date.now());
      const created = await client.post(PAGE, { name: 'today', expires_at: today });
      assert.equal(created.statusCode, 303);
      const plaintext = /<input id="new-token"[^>]*? value="([^"]*)"/.exec((await client.follow(created)).body)?.[1] ?? '';
      const call = () => t.app.inject({ url: '/api/user', headers: bearer(plaintext) });
      assert.equal((await call()).statusCode, 200);
      // The clock moves to the end of the day (or of the global lifetime, if that comes first).
      const end = Math.min(startOf(today) + DAY, lifetimeDays === null ? Infinity : Date.now() + lifetimeDays * DAY);
      mock.timers.enable({ apis: ['Date'], now: end - 1 });
      try {
        assert.equal((await call()).statusCode, 200, 'a millisecond before');
        mock.timers.setTime(end);
        const refused = await call();
        assert.equal(refused.statusCode, 401);
        assert.deepEqual(refused.json(), { message: 'Unauthenticated.', errors: {} });
      } finally {
        mock.timers.reset();
      }
    });
  });
}

suite('API tokens page: own expiry, tokens with no global lifetime', {}, null);
suite('API tokens page: own expiry, SANCTUM_EXPIRATION of three days', { SANCTUM_EXPIRATION: String(3 * 24 * 60) }, 3);
