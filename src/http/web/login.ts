// GET /login, POST /login: email + password (+ remember), through the sign-in pipeline
// (modules/sign-in: throttled per email + IP). With two-factor on, a correct password only opens
// the code step (two-factor-challenge.ts): a page redirect for a browser, `{"two_factor": true}`
// for an SPA (Fortify's answer).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { checked, field, localeFor, schemaErrors } from '../shared/forms.js';
import { answerSignIn, finishSignIn, signInContext } from '../shared/sign-in.js';
import { submit } from './forms.js';
import { LoginContract } from './spa-contract.js';

// The spec's login rules: a valid email, a password of at least 6 characters. The email's format
// is judged by the password method on its normalized spelling (modules/sign-in/methods/password.ts).
const LoginBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 255 }),
  password: Type.String({ minLength: 6, maxLength: 4096 }),
  remember: Type.Optional(Type.Union([Type.Boolean(), Type.String({ maxLength: 10 })])),
});

export async function loginRoutes(app: FastifyInstance): Promise<void> {
  const page = { template: 'auth/login', keep: ['email', 'remember'] } as const;

  app.get('/login', { config: { auth: 'guest' } }, async (_request, reply) => reply.guestForm(page.template));

  app.post('/login', { config: { auth: 'guest', spa: true }, schema: { ...LoginContract, body: LoginBody }, attachValidation: true }, async (request, reply) =>
    submit(request, reply, page, async () => {
      const locale = localeFor(app, request);
      const { signIn } = app.services;
      const proof = { email: field(request, 'email'), password: field(request, 'password'), earlier: schemaErrors(request, locale) };
      const outcome = await signIn.attempt(signIn.methods.password, proof, signInContext(app, request, 'site'));
      return answerSignIn(request, reply, await finishSignIn(app, request, reply, outcome, { remember: checked(request, 'remember') }));
    }),
  );
}
