// GET /api/user, PUT /api/user, PUT /api/user/password.
import { normalizeIP } from '@fastify/rate-limit';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { KeptAccess } from '../../modules/auth/auth.service.js';
import { apiLocale } from '../../plugins/errors.js';
import { SESSION_COOKIE, cookieName } from '../../plugins/session.js';
import { unauthenticated } from '../../modules/shared/errors.js';
import { presentUser } from '../../modules/users/users.presenter.js';
import { keptBodies } from '../../perf/kept-bodies.js';
import { NoContent, errorResponses } from '../shared/schemas.js';
import { AUDITED_FOR_ADMINS, adminActing } from './acting.js';
import { EXAMPLE_USER, UserRef, UserSchema } from './schemas.js';

const UpdateBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  email: Type.Optional(Type.String({ format: 'email', minLength: 1, maxLength: 255, description: 'A new address: starts a pending change (202), never changes it at once.' })),
  current_password: Type.Optional(Type.String({ maxLength: 4096, description: 'Required with a new `email`.' })),
}, { examples: [{ name: 'Ada King' }] });

// The account routes' guard: a token with a list of abilities needs user:write (the document says so, openapi.ts).
const USER_WRITE = { auth: { ability: 'user:write' as const } };

// The answer to an email change: the user as they are (the old address still theirs), and the
// address waiting for its link.
const PendingChange = Type.Object(
  {
    ...UserSchema.properties,
    pending_email: Type.String({ format: 'email', description: 'The new address, waiting for the link mailed to it.' }),
  },
  { examples: [{ ...EXAMPLE_USER, pending_email: 'ada.king@example.com' }] },
);

const UPDATE_DESCRIPTION =
  'Other fields are ignored. The name changes at once (200, the updated user). A new `email` never does: it needs the ' +
  'current password as `current_password` (422 on `current_password` when missing or wrong; 5 tries a minute per account ' +
  'and address, then 429), then the change waits, as on the site, for the link mailed to the new address, and the old ' +
  'address gets a notice with a link that cancels it. The answer is then 202 with the user unchanged and `pending_email`. ' +
  `A new request replaces a pending one. ${AUDITED_FOR_ADMINS} (user.updated, naming the field, for a new name; an email change only starts, and leaves none).`;

const PasswordBody = Type.Object({
  current_password: Type.String({ minLength: 1, maxLength: 4096 }),
  password: Type.String({ minLength: 1, maxLength: 4096 }),
  password_confirmation: Type.Optional(Type.String({ maxLength: 4096 })),
}, { examples: [{ current_password: 'correct horse battery staple', password: 'a new long passphrase', password_confirmation: 'a new long passphrase' }] });

// The serialized answer per user object (the token lookup hands out the same one while it holds).
const userBodies = keptBodies<string>();

/**
 * A first-party SPA's own session (the cookie that authenticated it) and its remember-me
 * device: what a password change from the SPA keeps, as the profile page keeps its browser.
 */
async function ownSession(app: FastifyInstance, request: FastifyRequest): Promise<KeptAccess> {
  const raw = request.cookies[cookieName(app.config, SESSION_COOKIE)];
  if (raw === undefined) return {};
  const sessionId = raw.slice(0, raw.lastIndexOf('.'));
  const data = await new Promise<Record<string, unknown> | null>((resolve) => {
    app.services.sessions.get(sessionId, (error, session) => resolve(error || session == null ? null : (session as Record<string, unknown>)));
  });
  const selector = data?.rememberSelector;
  return { sessionId, rememberSelector: typeof selector === 'string' ? selector : null };
}

export const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/user',
    { config: { auth: 'token' }, schema: { summary: 'The authenticated user', tags: ['user'], response: { 200: UserRef, ...errorResponses(401) } } },
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
      config: USER_WRITE,
      schema: {
        summary: 'Update the name; start an email change',
        description: UPDATE_DESCRIPTION,
        tags: ['user'],
        body: UpdateBody,
        response: { 200: UserRef, 202: PendingChange, ...errorResponses(401, 403, 422) },
      },
    },
    async (request, reply) => {
      const { name, email, current_password } = request.body;
      const user = await app.services.users.findById(request.caller!.user.id);
      if (user === undefined) throw unauthenticated();
      // Password tries count per account + client (an IPv6 client by its /64, as the sign-in's).
      const proof = { currentPassword: current_password, ip: normalizeIP(request.ip) };
      const result = await app.services.auth.updateProfile(user, { name, email }, apiLocale(request), proof, adminActing(request, request.caller!) ?? undefined);
      if (!result.emailChangeStarted || result.pendingEmail === null) return presentUser(result.user);
      return reply.code(202).send({ ...presentUser(result.user), pending_email: result.pendingEmail });
    },
  );

  app.put(
    '/user/password',
    {
      config: USER_WRITE,
      schema: {
        summary: 'Change the password',
        description:
          'Ends every other way into the account: every browser session (site and panel), remember-me device and token of the ' +
          'user, but the caller\'s own (the calling token, or the first-party SPA\'s own session). The same rules as the ' +
          `profile page: 422 on current_password when wrong, 5 tries a minute per account and address, then 429. ${AUDITED_FOR_ADMINS} (user.updated, naming the password, never a value).`,
        tags: ['user'],
        body: PasswordBody,
        response: { 204: NoContent, ...errorResponses(401, 403, 422) },
      },
    },
    async (request, reply) => {
      const caller = request.caller!;
      const user = await app.services.users.findById(caller.user.id);
      if (user === undefined) throw unauthenticated();
      // The caller's own way in stays: its token, or the SPA's own session.
      const keep = caller.tokenId !== null ? { tokenId: caller.tokenId } : await ownSession(app, request);
      await app.services.auth.changePassword(user, request.body, apiLocale(request), normalizeIP(request.ip), {}, keep, adminActing(request, caller) ?? undefined);
      return reply.code(204).send(null);
    },
  );
};
