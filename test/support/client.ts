// A small browser for app.inject, shared by the site, panel and security tests: keeps cookies
// between requests (honouring deletions and Max-Age), scrapes the CSRF token of the last page
// with a form, and posts urlencoded forms with it, as a browser with JavaScript turned off would.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

export type CookieRecord = {
  name: string;
  value: string;
  path?: string;
  maxAge?: number;
  expires?: Date;
  httpOnly?: boolean;
  secure?: boolean;
  sameSite?: string;
};

/** Form fields; an undefined value is left out, URLSearchParams may repeat a field (ticked boxes). */
export type FormFields = Record<string, string | undefined> | URLSearchParams;

export type PostOptions = {
  /** The CSRF token to send: the scraped one by default; false sends none. */
  token?: string | false;
  headers?: Record<string, string>;
};

const TOKEN = /name="_token" value="([^"]+)"/;

export class WebClient {
  readonly cookies = new Map<string, string>();
  /** The CSRF token of the last page that had a form. */
  csrf: string | null = null;
  last: LightMyRequestResponse | null = null;

  constructor(
    private readonly app: FastifyInstance,
    private readonly defaults: { headers?: Record<string, string>; remoteAddress?: string } = {},
  ) {}

  /** The Cookie header this client sends. */
  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    return this.send({ method: 'GET', url, headers });
  }

  /** Posts a form; `_token` is added unless options.token is false. */
  async post(url: string, form: FormFields = {}, options: PostOptions = {}): Promise<LightMyRequestResponse> {
    const token = options.token === undefined ? this.csrf : options.token;
    const body = new URLSearchParams();
    const fields = form instanceof URLSearchParams ? [...form] : Object.entries(form);
    for (const [name, value] of fields) if (value !== undefined) body.append(name, value);
    if (token !== false && token !== null) body.set('_token', token);
    return this.send({
      method: 'POST',
      url,
      payload: body.toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...options.headers },
    });
  }

  /** Posts JSON with the scraped token in X-CSRF-TOKEN (an SPA's fetch). */
  async postJson(url: string, json: Record<string, unknown>): Promise<LightMyRequestResponse> {
    return this.send({
      method: 'POST',
      url,
      payload: JSON.stringify(json),
      headers: { 'content-type': 'application/json', accept: 'application/json', ...(this.csrf === null ? {} : { 'x-csrf-token': this.csrf }) },
    });
  }

  /** Opens the page of a form first (for its CSRF token), then posts it. */
  async submit(pageUrl: string, action: string, form: FormFields, options: PostOptions = {}): Promise<LightMyRequestResponse> {
    const page = await this.get(pageUrl);
    if (page.statusCode !== 200) throw new Error(`GET ${pageUrl} answered ${page.statusCode}`);
    return this.post(action, form, options);
  }

  /** Signs in to the panel and opens the page it leads to; throws unless the login succeeds. */
  async adminLogin(email: string, password: string): Promise<LightMyRequestResponse> {
    const response = await this.submit('/admin/login', '/admin/login', { email, password });
    if (response.statusCode !== 303) throw new Error(`admin login failed: ${response.statusCode}`);
    // The login gave a new session (and CSRF secret): the next page holds the token that works now.
    await this.get(String(response.headers.location));
    return response;
  }

  /** GETs the Location of a redirect. */
  async follow(response: LightMyRequestResponse = this.last!): Promise<LightMyRequestResponse> {
    const location = response.headers.location;
    if (typeof location !== 'string') throw new Error(`not a redirect: ${response.statusCode}`);
    const url = new URL(location, 'http://localhost');
    return this.get(`${url.pathname}${url.search}`);
  }

  private async send(request: { method: 'GET' | 'POST'; url: string; payload?: string; headers: Record<string, string> }): Promise<LightMyRequestResponse> {
    const cookie = this.cookieHeader();
    const response = await this.app.inject({
      method: request.method,
      url: request.url,
      payload: request.payload,
      remoteAddress: this.defaults.remoteAddress,
      headers: { ...this.defaults.headers, ...(cookie === '' ? {} : { cookie }), ...request.headers },
    });
    for (const set of response.cookies as CookieRecord[]) {
      const expired = (set.maxAge !== undefined && set.maxAge <= 0) || (set.expires !== undefined && set.expires.getTime() <= Date.now()) || set.value === '';
      if (expired) this.cookies.delete(set.name);
      else this.cookies.set(set.name, set.value);
    }
    const token = TOKEN.exec(response.body);
    if (token?.[1] !== undefined) this.csrf = token[1];
    this.last = response;
    return response;
  }
}

/** The Set-Cookie record for `name` in a response. */
export function setCookie(response: LightMyRequestResponse, name: string): CookieRecord | undefined {
  return (response.cookies as CookieRecord[]).find((cookie) => cookie.name === name);
}

/** The text of the inline error of a form field, or null. */
export function fieldError(html: string, field: string): string | null {
  const match = new RegExp(`id="field-${field}-error">([^<]*)<`).exec(html);
  return match?.[1] === undefined ? null : decodeEntities(match[1]);
}

/** The value attribute of a form field, or null. */
export function fieldValue(html: string, field: string): string | null {
  const match = new RegExp(`id="field-${field}"[^>]*? value="([^"]*)"`).exec(html);
  return match?.[1] === undefined ? null : decodeEntities(match[1]);
}

/** The text of a page's alert box (errors that belong to no visible field), or null. */
export function alertText(html: string): string | null {
  const match = /<div class="alert" role="alert">([^<]*)<\/div>/.exec(html);
  return match?.[1] === undefined ? null : decodeEntities(match[1]);
}

/** The flash status message of a page, or null. */
export function statusMessage(html: string): string | null {
  const match = /<div class="flash" role="status">([^<]*)<\/div>/.exec(html);
  return match?.[1] === undefined ? null : decodeEntities(match[1]);
}

export function decodeEntities(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_m, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&#x([0-9a-f]+);/gi, (_m, code: string) => String.fromCodePoint(parseInt(code, 16)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/**
 * A page's HTML with its numeric character references (&#x2019;) written as the characters they
 * stand for: pages write what is beyond Latin-1 that way (src/http/shared/latin1.ts), and a test
 * compares texts as a reader sees them. Named references (&amp;, &lt;) stay.
 */
export function characters(html: string): string {
  return html.replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)));
}
