// Fastify names every plugin it registers (for its errors and its plugin tree). A plugin without
// a display name is looked for among the exports of every module in require.cache, twice per
// registration: about a tenth of an app's build, which the test suite pays hundreds of times
// per process. The route plugins are given their names once, where they are registered.
import type { FastifyPluginAsync, FastifyPluginCallback } from 'fastify';

const DISPLAY_NAME = Symbol.for('fastify.display-name');

// The plugins' own option and type-provider types vary; only the function matters here.
type Plugin = FastifyPluginAsync<never> | FastifyPluginCallback<never> | ((...args: never[]) => unknown);

/** Gives each plugin its key as Fastify's display name, unless it has one (fastify-plugin sets it). */
export function namePlugins(plugins: Record<string, Plugin>): void {
  for (const [name, plugin] of Object.entries(plugins)) {
    const target = plugin as unknown as Record<symbol, unknown>;
    target[DISPLAY_NAME] ??= name;
  }
}
