// Support for the first-party SPA tests: an app with SANCTUM_STATEFUL_DOMAINS set, a cookie jar
// for inject(), and a test-only way to log a user in on the site session, so these tests check
// the cookie authentication of /api without depending on the login form.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildTestApp, type TestApp } from '../helpers.js';

export const TEST_LOGIN_PATH = '/__test__/login';

/** Test-only: logs user `id` in on the site session, as the login action does (new session id). */
export async function addTestLogin(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { id: string } }>(`${TEST_LOGIN_PATH}/:id`, { config: { auth: 'public' } }, async (request, reply) => {
    await request.session.regenerate();
    request.session.userId = Number(request.params.id);
    return reply.code(204).send();
  });
}

/** An app on a fresh database with the given environment and the test-only login route. */
export function buildStatefulApp(env: Record<string, string>): Promise<TestApp> {
  // In the browser scope, where the session lives (buildApp's test seam).
  return buildTestApp(env, { browserRoutes: addTestLogin });
}

/** A browser's cookie store for one host, fed from inject() answers. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  take(response: LightMyRequestResponse): this {
    for (const cookie of response.cookies as { name: string; value: string; maxAge?: number; expires?: Date }[]) {
      const expired = cookie.maxAge === 0 || (cookie.expires !== undefined && cookie.expires.getTime() < Date.now()) || cookie.value === '';
      if (expired) this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    return this;
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}
