// The site's pages that `npm run bench` measures (issue 26), who must be signed in to see each,
// and what each answer must hold to count: a 200 whose body is the page itself, never a redirect
// to a login form or the form shown in the page's place.
import type { Request } from './load.js';

/** Who asks: nobody, the bench user signed in on the site (POST /login), or an administrator signed in on the panel (POST /admin/login). */
export type Visitor = 'anonymous' | 'user' | 'admin';

/** A class of pages and its target, a ratio to a bare server sending the same bytes. */
export type PageGroup = 'public' | 'form' | 'signed-in' | 'panel';
export const PAGE_TARGETS: Record<PageGroup, number> = { public: 0.3, form: 0.2, 'signed-in': 0.15, panel: 0.1 };

export type Page = {
  path: string;
  label: string;
  group: PageGroup;
  visitor: Visitor;
  /** Strings the body must contain. */
  markers: string[];
  /** A string the body must contain exactly this many times (the rows of a list). */
  count?: [string, number];
};

// A post of the small data set that is published and English (seed.ts: every tenth post is a
// draft, every third is French), so /blog/{slug} shows it to a visitor without a language.
const POST = 998;

export const PAGES: Page[] = [
  { path: '/', label: 'GET / (home, newest posts)', group: 'public', visitor: 'anonymous', markers: ['<h2 id="home-latest-title">'], count: ['href="/blog/post-number-', 15] },
  { path: '/blog', label: 'GET /blog (15 posts)', group: 'public', visitor: 'anonymous', markers: ['<h1>Blog'], count: ['<h2 class="post-item-title">', 15] },
  { path: `/blog/post-number-${POST}`, label: 'GET /blog/{slug}', group: 'public', visitor: 'anonymous', markers: [`<h1>Post number ${POST}<`] },
  { path: '/feed.xml', label: 'GET /feed.xml', group: 'public', visitor: 'anonymous', markers: ['<feed xmlns="http://www.w3.org/2005/Atom"'], count: ['<entry>', 20] },
  { path: '/login', label: 'GET /login', group: 'form', visitor: 'anonymous', markers: ['<form method="post" action="/login"', 'name="_token"'] },
  { path: '/register', label: 'GET /register', group: 'form', visitor: 'anonymous', markers: ['action="/register"', 'name="_token"'] },
  { path: '/forgot-password', label: 'GET /forgot-password', group: 'form', visitor: 'anonymous', markers: ['action="/forgot-password"', 'name="_token"'] },
  { path: '/dashboard', label: 'GET /dashboard', group: 'signed-in', visitor: 'user', markers: ['<h1>Dashboard', 'action="/logout"'] },
  { path: '/profile', label: 'GET /profile', group: 'signed-in', visitor: 'user', markers: ['<h1>Profile', 'action="/logout"'] },
  { path: '/security', label: 'GET /security', group: 'signed-in', visitor: 'user', markers: ['<h1>Security', 'action="/logout"'] },
  { path: '/user/api-tokens', label: 'GET /user/api-tokens', group: 'signed-in', visitor: 'user', markers: ['<h1>API tokens', 'action="/logout"'] },
  { path: '/admin/posts', label: 'GET /admin/posts (15 rows)', group: 'panel', visitor: 'admin', markers: ['<h1>Posts', 'action="/admin/logout"'], count: ['<tr>', 16] },
  { path: '/admin/users', label: 'GET /admin/users (15 rows)', group: 'panel', visitor: 'admin', markers: ['<h1>Users', 'action="/admin/logout"'], count: ['<tr>', 16] },
];

/** The blog's list page, measured again on 100,000 posts against 1,000. */
export const BLOG = PAGES.find((page) => page.path === '/blog')!;

/** The Cookie header of each visitor on one process of the service ('' for nobody). */
export type Cookies = Record<Visitor, string>;

/** The request of a page as a browser sends it, with the visitor's cookie (never an If-None-Match: every answer is a full 200). */
export function pageRequest(page: Page, cookies: Cookies): Request {
  const cookie = cookies[page.visitor];
  return { path: page.path, headers: { accept: 'text/html,application/xhtml+xml,application/atom+xml', ...(cookie === '' ? {} : { cookie }) } };
}

/** Why this answer is not the page (a wrong status, a redirect, a missing marker), or null when it is. */
export function notThePage(page: Page, status: number, body: string): string | null {
  if (status !== 200) return `answered ${status}`;
  const missing = page.markers.find((marker) => !body.includes(marker));
  if (missing !== undefined) return `has no ${JSON.stringify(missing)} in its body`;
  if (page.count !== undefined) {
    const [marker, expected] = page.count;
    const found = body.split(marker).length - 1;
    if (found !== expected) return `has ${found} ${JSON.stringify(marker)}, not ${expected}`;
  }
  return null;
}

/** `name=value` of each cookie an answer sets. */
const cookiesOf = (response: Response) => response.headers.getSetCookie().map((line) => line.split(';')[0]!);

/**
 * Signs in through the form at `formPath` (/login or /admin/login) as a browser does: GET the
 * form for its session cookie and CSRF token, POST the email and password with them, and keep the
 * session cookie of the answer (the session is renewed on sign-in). Fails unless the answer is a
 * redirect away from the form.
 */
export async function signIn(origin: string, formPath: '/login' | '/admin/login', email: string, password: string): Promise<string> {
  const form = await fetch(origin + formPath, { redirect: 'manual', headers: { accept: 'text/html' } });
  const html = await form.text();
  const token = /name="_token" value="([^"]+)"/.exec(html)?.[1];
  const formCookies = cookiesOf(form);
  if (form.status !== 200 || token === undefined || formCookies.length === 0) throw new Error(`GET ${formPath} gave no form to sign in with (${form.status}, ${formCookies.length} cookies)`);
  const answer = await fetch(origin + formPath, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', cookie: formCookies.join('; ') },
    body: new URLSearchParams({ _token: token, email, password }).toString(),
  });
  await answer.arrayBuffer();
  const location = answer.headers.get('location') ?? '';
  const cookies = cookiesOf(answer);
  if (answer.status !== 303 || location.includes('login') || cookies.length === 0) {
    throw new Error(`POST ${formPath} as ${email} did not sign in: ${answer.status} to "${location}", ${cookies.length} cookies`);
  }
  return cookies.join('; ');
}
