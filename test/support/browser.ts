// Browser-test support: a real server on a free loopback port, Debian's Chromium driven by
// playwright-core (launchBrowser, the one place that starts it), and an axe-core accessibility
// check. Tests skip (with the reason printed) where Chromium is not installed, and never under
// CI=true (support/services.ts). They run once, in the SQLite run of the suite: they test what
// the browser shows and does, and every flow they drive also runs through app.inject on both
// databases.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildApp } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import { createTestDatabase, testConfig, type TestDatabase } from '../helpers.js';
import { startTestProvider, type TestProvider } from './oidc-provider.js';
import { descendants } from './processes.js';
import { oncePerRun, skipWithout } from './services.js';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM_PATH);
/** Pass as the `skip` option of a browser test: false, or the reason it does not run here. */
export const skipWithoutChromium: string | false =
  skipWithout(hasChromium ? false : `Chromium not found at ${CHROMIUM_PATH}`) || oncePerRun('what the browser shows and does');

/**
 * Chromium's features turned off for the tests. Playwright passes its own `--disable-features`
 * list; Chromium takes the last one given and does not merge them, so this repeats Playwright's
 * (playwright-core 1.65, chromiumSwitches.ts) and adds two: Chromium 13x preloads a WebUI renderer
 * for the address bar's popup (chrome://omnibox-popup.top-chrome), which headless never shows and
 * which kept 0.6 of a core busy while a page sat idle on this 2-core machine (35 ms of CPU a second
 * without it). A browser file of the suite took a quarter to a third less CPU without it
 * (docs/performance.md). launchBrowser checks that no feature of Playwright's own list is dropped.
 */
const DISABLED_FEATURES = [
  // Playwright's own list.
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'msForceBrowserSignIn',
  'msEdgeUpdateLaunchServicesPreferredVersion',
  // The address bar's popup, preloaded as a WebUI page.
  'WebUIOmniboxPopup',
  'WebUIOmniboxAimPopup',
];

/** Whether this machine has /proc to find the browser's command line in (Linux). */
export const hasProc = existsSync('/proc/self/cmdline');

/** The command lines of this process's Chromium browsers: its descendants started with the DevTools pipe. */
export function browserCommandLines(): string[][] {
  return descendants(process.pid)
    .map((each) => each.args)
    .filter((args) => args.includes('--remote-debugging-pipe'));
}

/**
 * The features of Playwright's `--disable-features` that a browser's last (effective) one drops:
 * with a newer playwright-core whose list has grown, DISABLED_FEATURES must grow with it.
 */
export function droppedFeatures(args: string[]): string[] {
  const lists = args.filter((arg) => arg.startsWith('--disable-features=')).map((arg) => arg.slice('--disable-features='.length).split(','));
  const effective = new Set(lists.at(-1) ?? []);
  return [...new Set(lists.slice(0, -1).flat())].filter((feature) => feature !== '' && !effective.has(feature));
}

export async function launchBrowser(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', `--disable-features=${DISABLED_FEATURES.join(',')}`],
  });
  // Checked where /proc tells (Linux, CI); elsewhere the launch is taken as it is.
  if (!hasProc) return browser;
  const commandLines = browserCommandLines();
  const dropped = commandLines.flatMap(droppedFeatures);
  if (commandLines.length === 0 || dropped.length > 0) {
    await browser.close();
    if (commandLines.length === 0) throw new Error(`launchBrowser found no Chromium process started by this one to check its --disable-features (${CHROMIUM_PATH})`);
    throw new Error(`launchBrowser would turn Playwright's own disabled features back on (${[...new Set(dropped)].join(', ')}): add them to DISABLED_FEATURES in test/support/browser.ts`);
  }
  return browser;
}

/**
 * A page whose browser has a platform authenticator that verifies the user (a fingerprint, say):
 * a virtual authenticator of the DevTools protocol's WebAuthn domain. `credentials` lists what it
 * holds; `errors` collects the page's uncaught errors.
 */
export async function pageWithAuthenticator(browser: Browser, width = 1100) {
  const context = await browser.newContext({ viewport: { width, height: 800 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  const credentials = async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials;
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  return { page, errors, credentials };
}

/** A free TCP port on 127.0.0.1 (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Builds an app whose configuration names its own address (APP_URL) and listens on 127.0.0.1 at
 * that port. The port is free when chosen but may be taken before the app listens (a parallel
 * test's connection can get it): then the app is closed and another port is tried.
 */
/**
 * A listening app on a free localhost port with a real provider named `corp` registered for its
 * callback: the provider starts once the port (and so the redirect URI) is known, again if a
 * port is taken.
 */
export async function listenWithProvider(database: TestDatabase): Promise<{ app: FastifyInstance; url: string; provider: TestProvider; config: Config }> {
  let provider: TestProvider | undefined;
  let config: Config | undefined;
  const { app, url } = await listenWithAppUrl('localhost', async (address) => {
    await provider?.close();
    provider = await startTestProvider([`${address}/auth/corp/callback`]);
    config = testConfig({ APP_URL: address, ...provider.env('corp') });
    return buildApp(config, { db: database.db });
  });
  return { app, url, provider: provider!, config: config! };
}

export async function listenWithAppUrl(host: string, build: (url: string) => Promise<FastifyInstance>): Promise<{ app: FastifyInstance; url: string; port: number }> {
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const url = `http://${host}:${port}`;
    const app = await build(url);
    try {
      await app.listen({ host: '127.0.0.1', port });
      return { app, url, port };
    } catch (error) {
      await app.close();
      if ((error as { code?: unknown }).code !== 'EADDRINUSE' || attempt >= 5) throw error;
    }
  }
}

export type RunningServer = { url: string; app: FastifyInstance; config: Config; database: TestDatabase; close(): Promise<void> };

/** Builds the app on a fresh database and listens on a free loopback port; APP_URL matches it. */
export async function startServer(env: Record<string, string> = {}): Promise<RunningServer> {
  const database = await createTestDatabase();
  let config: Config | undefined;
  const { app, url } = await listenWithAppUrl('127.0.0.1', (address) => {
    config = testConfig({ APP_URL: address, ...env });
    return buildApp(config, { db: database.db });
  });
  return {
    url,
    app,
    config: config!,
    database,
    close: async () => {
      await app.close();
      await database.drop();
    },
  };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export type AxeViolation = { id: string; impact: string | null; help: string; nodes: { target: string[] }[] };

/**
 * Runs axe-core in the page and returns the serious and critical violations. The script is
 * evaluated through the DevTools protocol, so the page's CSP (no inline script) stays on.
 */
export async function seriousA11yViolations(page: Page): Promise<AxeViolation[]> {
  // Colours judged as they end, not halfway: a colour scheme just switched (emulateMedia) starts
  // CSS transitions (Swagger UI's links and buttons have them), and axe on a loaded machine read
  // mid-transition colours as too little contrast.
  await page.evaluate(async () => {
    document.body.getBoundingClientRect();
    await Promise.all(document.getAnimations().filter((animation) => animation instanceof CSSTransition).map((animation) => animation.finished.catch(() => undefined)));
  });
  // Once a document: the light and dark checks of a page share it (sending axe's 650 KB over the
  // DevTools pipe and compiling it took longer than the check itself).
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: Document): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document);
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Asserts that axe finds no serious or critical violation on the page in light and in dark; leaves it light. */
export async function assertAccessibleLightAndDark(page: Page, name: string): Promise<void> {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    assert.deepEqual(await seriousA11yViolations(page), [], `${name} (${colorScheme})`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/** Signs in through the site's (/login) or the panel's (/admin/login) form and waits to leave it. */
export async function logInWithForm(page: Page, baseUrl: string, path: '/login' | '/admin/login', email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}${path}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Log in', exact: true }).click();
  await page.waitForURL((url) => url.pathname !== path);
}

/** Full-page screenshots in light and dark, as `<dir>/<name>-light.png` and `-dark.png`, when dir is set (SCREENSHOT_DIR); leaves the page light. */
export async function screenshotLightAndDark(page: Page, dir: string | undefined, name: string): Promise<void> {
  if (dir === undefined) return;
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    // A full-page shot of a scrolled page draws a sticky header mid-page.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(dir, `${name}-${colorScheme}.png`), fullPage: true });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}
