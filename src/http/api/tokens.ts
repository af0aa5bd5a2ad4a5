// POST /api/tokens, DELETE /api/tokens/current, DELETE /api/tokens.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../../modules/shared/errors.js';
import { noticeTokenIssue } from '../shared/new-device.js';
import { NoContent, errorResponses } from '../shared/schemas.js';

export const INVALID_CREDENTIALS = 'The provided credentials are incorrect.';

const IssueBody = Type.Object({
  email: Type.String({ format: 'email', minLength: 1, maxLength: 255 }),
  password: Type.String({ minLength: 1, maxLength: 4096 }),
  device_name: Type.String({ minLength: 1, maxLength: 255 }),
});

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
        tags: ['tokens'],
        body: IssueBody,
        response: { 200: IssueResponse, ...errorResponses(401, 422) },
      },
    },
    async (request, reply) => {
      const { email, password, device_name } = request.body;
      // The answer holds a new secret: no cache keeps it.
      void reply.header('cache-control', 'no-store');
      const user = await app.services.users.attempt(email, password);
      // One answer for an unknown email and a wrong password, so the API does not reveal
      // which addresses have accounts.
      if (user === null) throw new AppError(401, INVALID_CREDENTIALS);
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
