// The app-wide plugins name themselves and what they need (fastify-plugin's name, dependencies
// and decorators): registered out of order, or without the app's shared objects, the app
// refuses to start instead of running with a hook missing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify, { type FastifyPluginAsync } from 'fastify';
import { apiGuardPlugin } from '../../src/plugins/api-guard.js';
import { rateLimitPlugin } from '../../src/plugins/rate-limit.js';
import { cookiePlugin, sessionPlugin } from '../../src/plugins/session.js';
import { statefulPlugin } from '../../src/plugins/stateful.js';
import { viewsPlugin } from '../../src/plugins/views.js';
import { testConfig } from '../helpers.js';

async function refusal(plugin: FastifyPluginAsync, withConfig = true): Promise<string> {
  const app = Fastify();
  // The shared objects' presence is what is checked here, not their use: nothing is called.
  if (withConfig) app.decorate('config', testConfig()).decorate('services', {} as never);
  try {
    await app.register(plugin);
    await app.ready();
    return 'started';
  } catch (error) {
    return (error as Error).message;
  } finally {
    await app.close();
  }
}

describe('plugin dependencies', () => {
  it('each plugin names what it needs, and is refused without it', async () => {
    const cases: [FastifyPluginAsync, RegExp][] = [
      [rateLimitPlugin, /api-guard/],
      [statefulPlugin, /cookie/],
      [sessionPlugin, /cookie/],
      [viewsPlugin, /errors/],
    ];
    for (const [plugin, named] of cases) assert.match(await refusal(plugin), named);
  });

  it('a plugin that reads the shared objects is refused without them', async () => {
    assert.match(await refusal(apiGuardPlugin, false), /config/);
    assert.match(await refusal(cookiePlugin, false), /config/);
  });
});
