// GET /api/user, PUT /api/user, PUT /api/user/password.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { checkNewPassword } from '../../modules/passwords/policy.js';
import { apiLocale } from '../../plugins/errors.js';
import { ValidationError } from '../../modules/shared/errors.js';
import { presentUser } from '../../modules/users/users.presenter.js';
import { keptBodies } from '../../perf/kept-bodies.js';
import { NoContent, errorResponses } from '../shared/schemas.js';
import { UserRef } from './schemas.js';

const UpdateBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  email: Type.Optional(Type.String({ format: 'email', minLength: 1, maxLength: 255 })),
});

const PasswordBody = Type.Object({
  current_password: Type.String({ minLength: 1, maxLength: 4096 }),
  password: Type.String({ minLength: 1, maxLength: 4096 }),
  password_confirmation: Type.Optional(Type.String({ maxLength: 4096 })),
});

const security = [{ bearer: [] }];

// The serialized answer per user object (the token lookup hands out the same one while it holds).
const userBodies = keptBodies<string>();

export const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/user',
    { config: { auth: 'token' }, schema: { summary: 'The authenticated user', tags: ['user'], security, response: { 200: UserRef, ...errorResponses(401) } } },
    (request, reply) => {
      const user = request.caller!.user;
      // fast-json-stringify, the route's serializer, returns a string.
      const body = userBodies(user, '', () => String(reply.serialize(presentUser(user))));
      // A string with its type set is sent as it is (Fastify serialises objects only).
      void reply.type('application/json; charset=utf-8').send(body);
    },
  );

  app.put(
    '/user',
    {
      config: { auth: 'token' },
      schema: {
        summary: 'Update name and/or email',
        description: 'Other fields are ignored. A new email clears email_verified_at.',
        tags: ['user'],
        security,
        body: UpdateBody,
        response: { 200: UserRef, ...errorResponses(401, 422) },
      },
    },
    async (request) => {
      const { name, email } = request.body;
      const user = await app.services.users.updateProfile(request.caller!.user, { name, email });
      return presentUser(user);
    },
  );

  app.put(
    '/user/password',
    {
      config: { auth: 'token' },
      schema: {
        summary: 'Change the password',
        description: 'Revokes every other token of the user; the calling token keeps working.',
        tags: ['user'],
        security,
        body: PasswordBody,
        response: { 204: NoContent, ...errorResponses(401, 422) },
      },
    },
    async (request, reply) => {
      const { current_password, password, password_confirmation } = request.body;
      // The rules' messages are written here, in the caller's language (the error handler
      // translates only the messages it writes itself).
      const errors = checkNewPassword(password, password_confirmation, apiLocale(request));
      if (Object.keys(errors).length > 0) throw new ValidationError(errors);
      const caller = request.caller!;
      await app.services.users.changePassword(caller.user.id, current_password, password);
      await app.services.tokens.revokeAll(caller.user.id, caller.tokenId ?? undefined);
      return reply.code(204).send(null);
    },
  );
};
