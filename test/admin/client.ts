// A small browser for app.inject: it keeps the cookies the app sets (a jar), reads the CSRF
// token out of the page it last fetched, and posts forms the way a browser does
// (application/x-www-form-urlencoded). Panel tests log in and click through with it.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

export type FormFields = Record<string, string | undefined>;

export class Client {
  private readonly cookies = new Map<string, string>();
  /** The _token of the last page that had a form. */
  csrf: string | undefined;

  constructor(
    private readonly app: FastifyInstance,
    /** The client's IP as the app sees it. */
    private readonly remoteAddress = '127.0.0.1',
  ) {}

  /** The value of a cookie, as the app last set it. */
  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  private header(): string | undefined {
    if (this.cookies.size === 0) return undefined;
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private keep(response: LightMyRequestResponse): void {
    for (const cookie of response.cookies as { name: string; value: string; maxAge?: number; expires?: Date }[]) {
      const gone = cookie.maxAge === 0 || (cookie.expires !== undefined && cookie.expires.getTime() <= Date.now()) || cookie.value === '';
      if (gone) this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    const token = /name="_token" value="([^"]+)"/.exec(response.body)?.[1];
    if (token !== undefined) this.csrf = token;
  }

  async get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const cookie = this.header();
    const response = await this.app.inject({ method: 'GET', url, remoteAddress: this.remoteAddress, headers: { ...headers, ...(cookie === undefined ? {} : { cookie }) } });
    this.keep(response);
    return response;
  }

  /**
   * Posts a form. The CSRF token of the last page is added unless `fields` sets `_token`
   * (to undefined to send none).
   */
  async post(url: string, fields: FormFields = {}, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const body = new URLSearchParams();
    const withToken: FormFields = '_token' in fields ? fields : { _token: this.csrf, ...fields };
    for (const [name, value] of Object.entries(withToken)) if (value !== undefined) body.append(name, value);
    const cookie = this.header();
    const response = await this.app.inject({
      method: 'POST',
      url,
      remoteAddress: this.remoteAddress,
      payload: body.toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers, ...(cookie === undefined ? {} : { cookie }) },
    });
    this.keep(response);
    return response;
  }

  /** Opens the page of a form first (for its CSRF token), then posts it. */
  async submit(pageUrl: string, action: string, fields: FormFields): Promise<LightMyRequestResponse> {
    const page = await this.get(pageUrl);
    if (page.statusCode !== 200) throw new Error(`GET ${pageUrl} answered ${page.statusCode}`);
    return this.post(action, fields);
  }

  /** Signs in to the panel and opens the page it leads to; throws unless the login succeeds. */
  async adminLogin(email: string, password: string): Promise<LightMyRequestResponse> {
    const response = await this.submit('/admin/login', '/admin/login', { email, password });
    if (response.statusCode !== 303) throw new Error(`admin login failed: ${response.statusCode}`);
    // The login gave a new session (and CSRF secret): the next page holds the token that works now.
    await this.get(String(response.headers.location));
    return response;
  }
}
