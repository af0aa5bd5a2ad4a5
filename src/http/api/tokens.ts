// POST /api/tokens, DELETE /api/tokens/current, DELETE /api/tokens.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { NoContent, errorResponses } from '../shared/schemas.js';
import { AUDITED_FOR_ADMINS, adminActing } from './acting.js';
import { issueApiToken, signInContext } from '../shared/sign-in.js';

export { INVALID_CREDENTIALS } from '../../modules/sign-in/methods/password.js';

const IssueBody = Type.Object({
  email: Type.String({ format: 'email', minLength: 1, maxLength: 255 }),
  password: Type.String({ minLength: 1, maxLength: 4096 }),
  device_name: Type.String({ minLength: 1, maxLength: 255 }),
  code: Type.Optional(Type.String({ maxLength: 64, description: 'The current 6-digit code of the authenticator app; required when two-factor sign-in is on (or `recovery_code`).' })),
  recovery_code: Type.Optional(Type.String({ maxLength: 128, description: 'One of the recovery codes, used up by this call; instead of `code`.' })),
  expires_at: Type.Optional(
    Type.String({
      format: 'date-time',
      maxLength: 64,
      description:
        "The token's own expiry (RFC 3339), as Sanctum 4's createToken takes one; without it the token lasts as long as the service's lifetime for tokens (SANCTUM_EXPIRATION, or forever). 422 on `expires_at` for a value that is not a date-time, a moment not in the future, or one later than that lifetime allows a token made now. Past it, the token is refused with 401 like any expired token.",
    }),
  ),
}, { examples: [{ email: 'ada@example.com', password: 'correct horse battery staple', device_name: "Ada's laptop" }] });

const ISSUE_DESCRIPTION =
  'Checks the email and password (401 "The provided credentials are incorrect." when either is wrong). For an account with ' +
  'two-factor sign-in on, the password alone is not enough: send `code` (the current 6-digit code) or `recovery_code` (one ' +
  'of the recovery codes, each works once). Without either: 422 with `errors.code`; a wrong, replayed or used-up code: 401 ' +
  '"The provided two-factor code is invalid."; more than 5 code attempts a minute per account and address: 429 with Retry-After.';

const IssueResponse = Type.Object(
  {
    token: Type.String({ description: '`<id>|<secret>`; shown once.' }),
    user: Type.Object({ id: Type.Integer(), name: Type.String(), email: Type.String() }),
  },
  { examples: [{ token: '7|Wq3tV9yZpL2mKx8RfN4sDc6HbJ1aGe5UoTi0', user: { id: 1, name: 'Ada Lovelace', email: 'ada@example.com' } }] },
);

export const tokenRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/tokens',
    {
      config: { auth: 'public' },
      schema: {
        summary: 'Issue a personal access token',
        description: ISSUE_DESCRIPTION,
        tags: ['tokens'],
        body: IssueBody,
        response: { 200: IssueResponse, ...errorResponses(401, 422) },
      },
    },
    async (request, reply) => {
      const { email, password, device_name, code, recovery_code, expires_at } = request.body;
      // The answer holds a new secret: no cache keeps it.
      void reply.header('cache-control', 'no-store');
      // A bad expiry is the request's fault: refused before the password is tried.
      const expiresAt = expires_at === undefined ? null : app.services.tokens.ownExpiry({ at: expires_at });
      // The sign-in pipeline, in the API's realm: one 401 for an unknown email and a wrong
      // password; the code after the password, in the same request (as Fortify asks it: which
      // tells a guesser the password was right, as any two-step sign-in does; it is throttled).
      const { signIn } = app.services;
      const outcome = await signIn.attempt(signIn.methods.password, { email, password }, signInContext(app, request, 'api'), { code, recovery_code });
      const token = await issueApiToken(app, request, outcome, device_name, expiresAt);
      const { user } = outcome;
      return { token: token.plaintext, user: { id: user.id, name: user.name, email: user.email } };
    },
  );

  app.delete(
    '/tokens/current',
    {
      config: { auth: 'token' },
      schema: {
        summary: 'Revoke the token used for this call',
        description: `${AUDITED_FOR_ADMINS} (token.revoked).`,
        tags: ['tokens'],
        response: { 204: NoContent, ...errorResponses(401) },
      },
    },
    async (request, reply) => {
      const caller = request.caller!;
      if (caller.tokenId === null) return reply.code(204).send(null);
      // An administrator's revocation is the panel's, with its audit line.
      const by = adminActing(request, caller);
      const token = by === null ? undefined : await app.services.admin.findToken(caller.tokenId);
      if (by !== null && token !== undefined) await app.services.admin.revokeToken(by, token);
      else await app.services.tokens.revoke(caller.tokenId);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/tokens',
    {
      // Revoking every token locks the owner's other clients out: an account change (user:write).
      config: { auth: { ability: 'user:write' } },
      schema: {
        summary: 'Revoke every token of the user',
        description: `${AUDITED_FOR_ADMINS} (tokens.revoked_all, with the count).`,
        tags: ['tokens'],
        response: { 204: NoContent, ...errorResponses(401, 403) },
      },
    },
    async (request, reply) => {
      const caller = request.caller!;
      const by = adminActing(request, caller);
      if (by !== null) await app.services.admin.revokeAllTokens(by, caller.user);
      else await app.services.tokens.revokeAll(caller.user.id);
      return reply.code(204).send(null);
    },
  );
};
