// GET /register, POST /register: name, email (unique), password (the password rules) and its
// confirmation; the new user is logged in, and mailed a verification link when that is on.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { done, field, localeFor, schemaErrors } from '../shared/forms.js';
import { browserDeviceId, noticeBrowserSignIn } from '../shared/new-device.js';
import { submit } from './forms.js';
import { RegisterContract } from './spa-contract.js';

const RegisterBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  email: Type.String({ format: 'email', minLength: 1, maxLength: 255 }),
  password: Type.String({ minLength: 1, maxLength: 4096 }),
  password_confirmation: Type.Optional(Type.String({ maxLength: 4096 })),
});

export async function registerRoutes(app: FastifyInstance): Promise<void> {
  const page = { template: 'auth/register', keep: ['name', 'email'] } as const;

  app.get('/register', { config: { auth: 'guest' } }, async (_request, reply) => reply.guestForm(page.template));

  app.post('/register', { config: { auth: 'guest', spa: true }, schema: { ...RegisterContract, body: RegisterBody }, attachValidation: true }, async (request, reply) =>
    submit(request, reply, page, async () => {
      const locale = localeFor(app, request);
      const input = {
        name: field(request, 'name'),
        email: field(request, 'email'),
        password: field(request, 'password'),
        password_confirmation: field(request, 'password_confirmation'),
      };
      const user = await app.services.auth.register(input, locale, schemaErrors(request, locale));
      // null: the address has an account (verification on) and its owner was mailed; the answer
      // is a new registration's, a fresh session id and the device cookie included, but nobody
      // is logged in.
      if (user === null) {
        await request.session.regenerate(['adminUserId', 'intended', 'flash']);
        // Stored and sent as a sign-in's is, though empty: a visitor who came without a session
        // (a guest's form needs none) must get a session cookie here too.
        await request.session.save();
        browserDeviceId(app, request, reply);
      } else {
        await app.loginSite(request, user);
        // The registering browser is the account's first device: recorded, no alert.
        noticeBrowserSignIn(app, request, reply, user, 'site');
      }
      return done(request, reply, '/dashboard');
    }),
  );
}
