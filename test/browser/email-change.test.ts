// Changing the email in headless Chromium, with a real SMTP server on loopback: the form on the
// security page asks for the password (then goes on by itself), the address stays until the link mailed to the new one
// is followed and its button pressed, then the page shows the new address. axe-core finds no
// serious or critical violation on the pages of the flow, in light and dark.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser, skipWithoutChromium, startServer, type RunningServer, assertAccessibleLightAndDark } from '../support/browser.js';
import { linkIn, startMailServer, type MailServer } from '../web/mail-server.js';

describe('email change in Chromium', { skip: skipWithoutChromium }, () => {
  let mail: MailServer;
  let server: RunningServer;
  let browser: Browser;

  before(async () => {
    mail = await startMailServer();
    server = await startServer({ ...mail.env, MUST_VERIFY_EMAIL: 'true' });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await mail?.close();
  });

  const audit = assertAccessibleLightAndDark;

  const waitForMail = async (address: string) => {
    for (let i = 0; i < 100 && mail.to(address).length === 0; i += 1) await server.app.services.mail.settled().then(() => new Promise((r) => setTimeout(r, 20)));
    const [message] = mail.to(address);
    assert.ok(message, `mail to ${address}`);
    return message;
  };

  it('changes the email from the security page: password, mailed link, confirm button, new address shown', async () => {
    await server.app.services.users.create({ name: 'Katherine Johnson', email: 'katherine@example.com', password: 'trajectory-1962', verified: true });
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));

    await page.goto(`${server.url}/login`);
    await page.getByLabel('Email').fill('katherine@example.com');
    await page.getByLabel('Password', { exact: true }).fill('trajectory-1962');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${server.url}/dashboard`);

    await page.goto(`${server.url}/security`);
    const section = page.getByRole('region', { name: 'Email address' });
    assert.equal(await section.getByTestId('current-email').innerText(), 'katherine@example.com');
    await audit(page, 'security');
    await section.getByLabel('New email address').fill('kj@nasa.example');
    await section.getByRole('button', { name: 'Send confirmation link' }).click();

    // The password first; then the form goes on by itself, with no second press.
    await page.waitForURL(`${server.url}/user/confirm-password`);
    await page.getByLabel('Password', { exact: true }).fill('trajectory-1962');
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('status').filter({ hasText: 'We sent a confirmation link to kj@nasa.example.' }).waitFor();
    assert.equal(page.url(), `${server.url}/security`);
    assert.equal(await section.getByTestId('current-email').innerText(), 'katherine@example.com', 'nothing changed yet');
    assert.match(await section.innerText(), /Waiting for confirmation: kj@nasa\.example/);
    await audit(page, 'security-pending');

    const link = linkIn(await waitForMail('kj@nasa.example'), `${server.url}/email/change/`);
    assert.ok(mail.to('katherine@example.com').some((message) => message.subject === 'Email address change requested'));
    await page.goto(link);
    await audit(page, 'email-change-confirm');
    await page.getByRole('button', { name: 'Confirm the new address' }).click();
    await page.waitForURL(`${server.url}/security`);
    assert.equal((await page.getByRole('status').innerText()).trim(), 'Your email address is now kj@nasa.example.');
    assert.equal(await section.getByTestId('current-email').innerText(), 'kj@nasa.example');
    assert.deepEqual(errors, []);
    await context.close();
  });
});
