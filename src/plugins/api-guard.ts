// Authentication of API routes. Every /api route declares `config.auth` (see RouteAuth); one
// without it stops the app at start-up, so no route is public by accident.
import type { FastifyInstance, FastifyReply, FastifyRequest, preValidationHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { can } from '../modules/tokens/abilities.js';
import { forbidden, unauthenticated } from '../modules/shared/errors.js';
import type { ApiCaller, RouteAuth } from './types.js';

/**
 * The bearer token of a request, or null. The scheme is matched exactly ("Bearer", one space,
 * one token): Laravel accepts any case, but a strict form leaves no variant for a proxy or a
 * log filter to treat differently; tokens in cookies or query parameters are never read.
 */
export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (header === undefined || !header.startsWith('Bearer ')) return null;
  const token = header.slice(7);
  return token === '' || /\s/.test(token) ? null : token;
}

/**
 * A hook that resolves the caller some other way (first-party session cookies); null if none.
 * Resolvers are asked only when a request carries a Cookie header and no Authorization header.
 */
export type CallerResolver = (request: FastifyRequest, reply: FastifyReply) => Promise<ApiCaller | null>;

declare module 'fastify' {
  interface FastifyInstance {
    /** Resolvers tried, in order, when a request carries no bearer token. */
    apiCallerResolvers: CallerResolver[];
  }
}

export const apiGuardPlugin = fp(async (app: FastifyInstance) => {
  app.decorateRequest('caller', null);
  app.decorate<CallerResolver[]>('apiCallerResolvers', []);

  const resolve = async (request: FastifyRequest, reply: FastifyReply): Promise<ApiCaller | null | 'invalid'> => {
    const token = bearerToken(request);
    if (token !== null) {
      // A bearer token is authoritative: whatever cookies come with it are ignored.
      return (await app.services.tokens.authenticate(token)) ?? 'invalid';
    }
    if (request.headers.authorization !== undefined) return 'invalid';
    for (const resolver of app.apiCallerResolvers) {
      const caller = await resolver(request, reply);
      if (caller !== null) return caller;
    }
    return null;
  };

  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth as RouteAuth | undefined;
    if (!route.url.startsWith('/api')) return;
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
    const guard: preValidationHookHandler = (request, reply, done) => {
      // Callback style, and answered at once where it can be: a kept token
      // (tokens.authenticateKept), or a request with no credentials at all (every resolver reads
      // a session cookie). The asynchronous path costs promises and microtask turns.
      const token = bearerToken(request);
      let quick: ApiCaller | null | 'invalid' | undefined;
      if (token !== null) {
        const kept = app.services.tokens.authenticateKept(token);
        quick = kept === undefined ? undefined : (kept ?? 'invalid');
      } else if (request.headers.authorization === undefined && request.headers.cookie === undefined) {
        quick = null;
      }
      if (quick !== undefined) {
        done(admit(request, reply, quick) ?? undefined);
        return;
      }
      resolve(request, reply).then(
        (caller) => done(admit(request, reply, caller) ?? undefined),
        (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
      );
    };
    route.preValidation = [guard, ...hooks];
  });
});
