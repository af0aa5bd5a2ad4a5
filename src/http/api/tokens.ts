// POST /api/tokens, DELETE /api/tokens/current, DELETE /api/tokens.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { assertTokenSecondFactor } from '../../modules/auth/two-factor-challenge.js';
import { AppError } from '../../modules/shared/errors.js';
import { noticeTokenIssue } from '../shared/new-device.js';
import { NoContent, errorResponses } from '../shared/schemas.js';

export const INVALID_CREDENTIALS = 'The provided credentials are incorrect.';

const IssueBody = Type.Object({
  email: Type.String({ format: 'email', minLength: 1, maxLength: 255 }),
  password: Type.String({ minLength: 1, maxLength: 4096 }),
  device_name: Type.String({ minLength: 1, maxLength: 255 }),
  code: Type.Optional(Type.String({ maxLength: 64, description: 'The current 6-digit code of the authenticator app; required when two-factor sign-in is on (or `recovery_code`).' })),
  recovery_code: Type.Optional(Type.String({ maxLength: 128, description: 'One of the recovery codes, used up by this call; instead of `code`.' })),
});

const ISSUE_DESCRIPTION =
  'Checks the email and password (401 "The provided credentials are incorrect." when either is wrong). For an account with ' +
  'two-factor sign-in on, the password alone is not enough: send `code` (the current 6-digit code) or `recovery_code` (one ' +
  'of the recovery codes, each works once). Without either: 422 with `errors.code`; a wrong, replayed or used-up code: 401 ' +
  '"The provided two-factor code is invalid."; more than 5 code attempts a minute per account and address: 429 with Retry-After.';

const IssueResponse = Type.Object({
  token: Type.String({ description: '`<id>|<secret>`; shown once.' }),
  user: Type.Object({ id: Type.Integer(), name: Type.String(), email: Type.String() }),
});

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
      const { email, password, device_name, code, recovery_code } = request.body;
      // The answer holds a new secret: no cache keeps it.
      void reply.header('cache-control', 'no-store');
      const user = await app.services.users.attempt(email, password);
      // One answer for an unknown email and a wrong password, so the API does not reveal
      // which addresses have accounts.
      if (user === null) throw new AppError(401, INVALID_CREDENTIALS);
      // The password is answered first, as Fortify does: asking for the code after it tells a
      // guesser the password was right, which any two-step sign-in does; the code is throttled.
      await assertTokenSecondFactor(app.services, user, { code, recovery_code }, request.ip);
      const token = await app.services.tokens.issue(user.id, device_name, ['*']);
      request.logUser = user.id;
      noticeTokenIssue(app, request, user, device_name);
      return { token: token.plaintext, user: { id: user.id, name: user.name, email: user.email } };
    },
  );

  app.delete(
    '/tokens/current',
    {
      config: { auth: 'token' },
      schema: { summary: 'Revoke the token used for this call', tags: ['tokens'], security: [{ bearer: [] }], response: { 204: NoContent, ...errorResponses(401) } },
    },
    async (request, reply) => {
      if (request.caller?.tokenId != null) await app.services.tokens.revoke(request.caller.tokenId);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/tokens',
    {
      config: { auth: 'token' },
      schema: { summary: 'Revoke every token of the user', tags: ['tokens'], security: [{ bearer: [] }], response: { 204: NoContent, ...errorResponses(401) } },
    },
    async (request, reply) => {
      await app.services.tokens.revokeAll(request.caller!.user.id);
      return reply.code(204).send(null);
    },
  );
};
