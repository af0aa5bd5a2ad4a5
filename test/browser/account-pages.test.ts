// The account pages of issue 27 §6 in headless Chromium: the unverified banner on the dashboard
// and the profile sends the link and comes back; the security page shows two-factor "Off" as a
// badge and ends every card with its buttons at one right edge, at 1280 and 390 px; where its
// script does not run, the page that goes on after a password confirmation is a form with one
// button.
// axe-core finds no serious or critical violation on any of them, in light and dark.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createUser } from '../helpers.js';
import { assertAccessibleLightAndDark, launchBrowser, logInWithForm, skipWithoutChromium, startServer, type RunningServer } from '../support/browser.js';
import { startMailServer, type MailServer } from '../web/mail-server.js';

describe('account pages that finish what they start, in Chromium', { skip: skipWithoutChromium }, () => {
  let mail: MailServer;
  let server: RunningServer;
  let browser: Browser;

  before(async () => {
    mail = await startMailServer();
    server = await startServer(mail.env);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await mail?.close();
  });

  const audit = assertAccessibleLightAndDark;

  const signedIn = async (user: { email: string; plainPassword: string }, options: { width?: number; locale?: string } = {}) => {
    const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await logInWithForm(page, server.url, '/login', user.email, user.plainPassword);
    if (options.locale !== undefined) await page.goto(`${server.url}/locale/${options.locale}`);
    return { page, errors };
  };

  it('shows the unverified banner on the dashboard and the profile, and sends the link from it', async () => {
    const user = await createUser(server.app, { email: 'ada-unverified@example.com', verified: false });
    const { page, errors } = await signedIn(user);
    for (const path of ['/dashboard', '/profile']) {
      await page.goto(`${server.url}${path}`);
      const banner = page.locator('[data-unverified-banner]');
      assert.match(await banner.innerText(), /ada-unverified@example\.com, is not verified yet/);
      await audit(page, `${path} with the unverified banner`);
    }
    await page.locator('[data-unverified-banner]').getByRole('button', { name: 'Send the link' }).click();
    await page.getByRole('status').filter({ hasText: 'A verification link has been sent to ada-unverified@example.com.' }).waitFor();
    assert.equal(page.url(), `${server.url}/profile`);
    await audit(page, 'profile after sending the link');
    await page.goto(`${server.url}/email/verify`);
    await audit(page, 'the verification notice');
    assert.deepEqual(errors, []);
  });

  /** The right edge of each card's last button, and of the card's content box. */
  const buttonEdges = (page: Page) =>
    page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('.security-sections > .card')].flatMap((card) => {
        const buttons = [...card.querySelectorAll<HTMLElement>('.form-actions .button')].filter((button) => button.offsetParent !== null);
        const last = buttons.at(-1);
        if (last === undefined) return [];
        const box = card.getBoundingClientRect();
        const padding = parseFloat(getComputedStyle(card).paddingRight) + parseFloat(getComputedStyle(card).borderRightWidth);
        return [{ card: card.querySelector('h2')?.textContent ?? '', button: Math.round(last.getBoundingClientRect().right), content: Math.round(box.right - padding) }];
      }),
    );

  for (const width of [1280, 390]) {
    it(`ends every security card with its buttons at its right edge and shows "Off" as a badge, at ${width} px`, async () => {
      const user = await createUser(server.app);
      const { page, errors } = await signedIn(user, { width });
      await page.goto(`${server.url}/security`);
      const edges = await buttonEdges(page);
      assert.ok(edges.length >= 3, JSON.stringify(edges));
      for (const edge of edges) assert.ok(Math.abs(edge.button - edge.content) <= 1, `${edge.card}: ${JSON.stringify(edge)}`);
      const off = page.locator('.two-factor-status .badge');
      assert.equal((await off.innerText()).trim(), 'Off');
      // A badge has a shape of its own: a background or an outline that differs from the card's.
      const look = await off.evaluate((badge) => {
        const style = getComputedStyle(badge);
        const card = getComputedStyle(badge.closest('.card')!);
        return { background: style.backgroundColor, card: card.backgroundColor, shadow: style.boxShadow, radius: style.borderTopLeftRadius };
      });
      assert.ok(look.background !== look.card && look.background !== 'rgba(0, 0, 0, 0)', JSON.stringify(look));
      assert.notEqual(look.shadow, 'none');
      await audit(page, `security at ${width} px`);
      assert.deepEqual(errors, []);
    });
  }

  it('goes on after the confirmation by one press of Continue where its script does not run', async () => {
    const user = await createUser(server.app);
    const { page } = await signedIn(user, { locale: 'fr' });
    // The page as a browser without JavaScript sees it (axe itself needs scripts in the page).
    await page.route('**/assets/confirm-continue.js', (route) => route.abort());
    await page.goto(`${server.url}/security`);
    await page.getByRole('button', { name: 'Activer' }).click();
    await page.waitForURL(`${server.url}/user/confirm-password`);
    await page.getByRole('textbox', { name: 'Mot de passe' }).fill(user.plainPassword);
    await page.getByRole('button', { name: 'Confirmer', exact: true }).click();
    await page.waitForURL(`${server.url}/user/confirm-password/continue`);
    await audit(page, 'the continuation page');
    await page.getByRole('button', { name: 'Continuer' }).click();
    await page.waitForURL(`${server.url}/security#two-factor`);
    await page.getByRole('img', { name: 'QR code à scanner avec une application d’authentification' }).waitFor();
  });
});
