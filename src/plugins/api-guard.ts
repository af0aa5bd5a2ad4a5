// Authentication of API routes. Every /api route declares `config.auth` (see RouteAuth); one
// without it stops the app at start-up, so no route is public by accident.
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, preValidationHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { then } from '../lib/maybe-promise.js';
import { can } from '../modules/tokens/abilities.js';
import { parseBearer } from '../modules/tokens/token-string.js';
import { forbidden, unauthenticated } from '../modules/shared/errors.js';
import type { ApiCaller, CallerResolver, RouteAuth } from './types.js';

export const apiGuardPlugin = fp(async (app: FastifyInstance) => {
  app.decorateRequest('caller', null);
  app.decorateRequest('credentials', null);
  app.decorate<CallerResolver[]>('apiCallerResolvers', []);
  const prefix = app.config.tokenPrefix;
  const { tokens } = app.services;

  const readCredentials: onRequestHookHandler = (request, _reply, done) => {
    request.credentials = parseBearer(request.headers.authorization, prefix);
    done();
  };

  // The caller of a request without a bearer token: a resolver's (a first-party session
  // cookie), or null.
  const resolve = async (request: FastifyRequest, reply: FastifyReply): Promise<ApiCaller | null> => {
    for (const resolver of app.apiCallerResolvers) {
      const caller = await resolver(request, reply);
      if (caller !== null) return caller;
    }
    return null;
  };

  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api')) return;
    // First of the route's onRequest hooks, whatever registered its own before.
    const onRequest = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [readCredentials, ...onRequest];
    const auth = route.config?.auth as RouteAuth | undefined;
    if (auth === undefined) throw new Error(`Route ${String(route.method)} ${route.url} declares no config.auth guard.`);
    if (auth === 'public') return;
    // preValidation: authentication comes before the body is validated, so a caller without a
    // valid token learns 401 and nothing about the route's rules (and rate limits, in onRequest,
    // still count it).
    const hooks = route.preValidation === undefined ? [] : Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation];
    // The error for this caller on this route, or null once request.caller is set (or the route
    // lets an anonymous caller through).
    const admit = (request: FastifyRequest, reply: FastifyReply, caller: ApiCaller | null | 'invalid'): Error | null => {
      if (caller === 'invalid' || caller === null) {
        // An optional token that is present but bad is still an error: a client sending a
        // revoked token should learn so rather than silently get the anonymous answer.
        if (auth === 'optional-token' && caller === null) return null;
        return unauthenticated();
      }
      request.caller = caller;
      // An answer for one authenticated caller is never stored by a browser or a proxy.
      void reply.header('cache-control', 'no-store');
      if (typeof auth === 'object' && !can(caller.abilities, auth.ability)) return forbidden();
      return null;
    };
    // Callback style, answered at once when the caller is known at once (a token the lookup
    // keeps; no credentials at all, as every resolver reads a cookie): a promise would cost
    // microtask turns on every request.
    const guard: preValidationHookHandler = (request, reply, done) => {
      const credentials = request.credentials;
      // A bearer token is authoritative: whatever cookies come with it are ignored.
      const caller =
        credentials === 'invalid'
          ? 'invalid'
          : credentials !== null
            ? then(tokens.authenticate(credentials), (found) => found ?? 'invalid')
            : request.headers.cookie === undefined
              ? null
              : resolve(request, reply);
      if (!(caller instanceof Promise)) {
        done(admit(request, reply, caller) ?? undefined);
        return;
      }
      caller.then(
        (found) => done(admit(request, reply, found) ?? undefined),
        (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
      );
    };
    route.preValidation = [guard, ...hooks];
  });
}, { name: 'api-guard', decorators: { fastify: ['config', 'services'] } });
