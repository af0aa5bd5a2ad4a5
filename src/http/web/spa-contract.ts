// What the browser routes a first-party SPA calls with `Accept: application/json` answer it, as
// Fortify answers an SPA: 204 for a step done, `{"two_factor": true}` when the code comes next,
// the `{message, errors}` envelope for a refusal. Each route spreads its entry into its `schema`;
// openapi.ts documents the routes marked `config.spa` from it. The same answers serialize the
// JSON replies; a browser's pages and redirects are strings and pass through untouched.
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifySchema } from 'fastify';
import { ErrorEnvelope, NoContent, type ErrorBody } from '../shared/schemas.js';

// The API's envelope, one component in the document for both faces (webRoutes adds the schema
// to its scope, as the API does to its own), with one example of the answer.
const envelope = (description: string, example: ErrorBody, headers?: Record<string, TSchema>): TSchema =>
  Type.Ref(ErrorEnvelope.$id!, { description, examples: [example], ...(headers === undefined ? {} : { headers }) });

const RetryAfter = Type.Integer({ minimum: 1, description: 'Seconds to wait before trying again.' });

const plain = (message: string): ErrorBody => ({ message, errors: {} });
const onField = (field: string, message: string): ErrorBody => ({ message, errors: { [field]: [message] } });

/** Every refusal a JSON client of these routes can meet, by status (the route picks its own). */
const REFUSALS = {
  400: ['The body is not valid JSON.', plain('The request body is not valid JSON.')],
  401: ['Not signed in (no session, or it expired).', plain('Unauthenticated.')],
  409: ['Already signed in: a guest step was called on a signed-in session.', plain('Already authenticated.')],
  413: ['Body too large.', plain('The request body is too large.')],
  415: ['Unsupported content type: send JSON or a urlencoded form.', plain('Unsupported Media Type.')],
  419: ["CSRF token mismatch: the X-XSRF-TOKEN header (the XSRF-TOKEN cookie's value) is missing or wrong.", plain('CSRF token mismatch.')],
  422: ['Validation failed: the failing fields and their messages.', onField('email', 'The email field is required.')],
  429: ['Too many attempts: the message says when to try again.', onField('email', 'Too many login attempts. Please try again in 42 seconds.')],
  500: ['Server error.', plain('Server Error.')],
  503: ['Service unavailable (database down).', plain('Service Unavailable.')],
} as const satisfies Record<number, readonly [string, ErrorBody]>;

type Refusal = keyof typeof REFUSALS;

/** The route's refusals (500 and 503 always); `own` gives a route's own example of a status. */
function refusals(statuses: Refusal[], own: Partial<Record<Refusal, ErrorBody>> = {}): Record<number, TSchema> {
  return Object.fromEntries(
    [...statuses, 500 as const, 503 as const].map((status) => {
      const [description, example] = REFUSALS[status];
      return [status, envelope(description, own[status] ?? example, status === 429 ? { 'Retry-After': RetryAfter } : undefined)];
    }),
  );
}

/** A body's refusals before the handler: bad JSON, too large, an unknown type, the schema's 422. */
const BODY_REFUSALS: Refusal[] = [400, 413, 415, 422];

const SignedIn = Type.Null({ description: 'Signed in: the session cookie now holds a new session id, and XSRF-TOKEN a new token.' });

const TwoFactorNext = Type.Object(
  { two_factor: Type.Literal(true) },
  { additionalProperties: false, examples: [{ two_factor: true }], description: 'The password was right and the account has two-factor sign-in on: POST /two-factor-challenge next, on the same session.' },
);

const ConfirmedStatus = Type.Object(
  { confirmed: Type.Boolean({ description: 'Whether a sensitive action would pass now, without confirming the password again.' }) },
  { additionalProperties: false, examples: [{ confirmed: true }], description: 'The password confirmation\'s state.' },
);

// Who may call: the session cookie (a guest's too: the CSRF token is checked against it), which
// GET /sanctum/csrf-cookie sets. The writes' X-XSRF-TOKEN header is added by openapi.ts.
const SESSION = [{ session: [] }];

const SPA_FLOW =
  'For a first-party SPA: send `Accept: application/json`, the cookies from GET /sanctum/csrf-cookie, and the XSRF-TOKEN ' +
  'cookie\'s value as the `X-XSRF-TOKEN` header. Without `Accept: application/json` the same path is the site\'s HTML form and answers with redirects.';

/** Both ways a browser route reads its fields: an SPA's JSON, a page's form. */
const FORM_TYPES = ['application/json', 'application/x-www-form-urlencoded'];

type Contract = Pick<FastifySchema, 'response'> & { summary: string; description: string; tags: string[]; security: Record<string, string[]>[]; consumes?: string[]; operationId: string };

function contract(entry: Omit<Contract, 'tags' | 'description'> & { description?: string }, body: boolean): Contract {
  return {
    ...entry,
    description: entry.description === undefined ? SPA_FLOW : `${entry.description}\n\n${SPA_FLOW}`,
    tags: ['spa'],
    ...(body ? { consumes: FORM_TYPES } : {}),
  };
}

export const LoginContract = contract(
  {
    operationId: 'postLogin',
    summary: 'Sign in with email and password (session cookie)',
    description: '204 when signed in; 200 `{"two_factor": true}` when the account\'s code comes next. Wrong credentials are a 422 on `email`; more than 5 tries a minute for an email and address, a 429.',
    security: SESSION,
    response: { 200: TwoFactorNext, 204: SignedIn, ...refusals([...BODY_REFUSALS, 409, 419, 429], { 422: onField('email', 'These credentials do not match our records.') }) },
  },
  true,
);

export const TwoFactorChallengeContract = contract(
  {
    operationId: 'postTwoFactorChallenge',
    summary: 'Finish a sign-in with the two-factor code or a recovery code',
    description: 'Send `code` (the authenticator\'s) or `recovery_code`. A wrong code, or no pending challenge (none, or expired), is a 422 on `code`.',
    security: SESSION,
    response: {
      204: SignedIn,
      ...refusals([...BODY_REFUSALS, 409, 419, 429], {
        422: onField('code', 'The provided two-factor code is invalid.'),
        429: onField('code', 'Too many attempts. Please try again in 42 seconds.'),
      }),
    },
  },
  true,
);

export const LogoutContract = contract(
  {
    operationId: 'postLogout',
    summary: 'Sign out of this browser\'s session',
    security: SESSION,
    response: { 204: Type.Null({ description: 'Signed out: the session is ended and its cookie cleared.' }), ...refusals([401, 419]) },
  },
  false,
);

export const RegisterContract = contract(
  {
    operationId: 'postRegister',
    summary: 'Create an account and sign in',
    description: 'A taken email is a 422 on `email`; with email verification on, the answer is the same 204 and the address\'s owner is mailed instead.',
    security: SESSION,
    response: { 204: Type.Null({ description: 'Registered (and signed in, unless the address already had an account).' }), ...refusals([...BODY_REFUSALS, 409, 419], { 422: onField('email', 'The email has already been taken.') }) },
  },
  true,
);

export const ForgotPasswordContract = contract(
  {
    operationId: 'postForgotPassword',
    summary: 'Mail a password reset link',
    description: 'The same 204 whether or not an account has this email.',
    security: SESSION,
    response: { 204: NoContent, ...refusals([...BODY_REFUSALS, 409, 419], { 422: onField('email', 'The email field must be a valid email address.') }) },
  },
  true,
);

export const ResetPasswordContract = contract(
  {
    operationId: 'postResetPassword',
    summary: 'Set a new password with the token from the reset link',
    description: 'A wrong or expired token is a 422 on `email`. A reset signs the account out everywhere.',
    security: SESSION,
    response: { 204: NoContent, ...refusals([...BODY_REFUSALS, 409, 419], { 422: onField('email', 'This password reset token is invalid.') }) },
  },
  true,
);

export const ConfirmPasswordContract = contract(
  {
    operationId: 'postUserConfirmPassword',
    summary: 'Confirm the password before a sensitive action',
    description: 'A confirmation lasts PASSWORD_TIMEOUT seconds. A wrong password is a 422 on `password`; too many tries, a 429.',
    security: SESSION,
    response: { 204: Type.Null({ description: 'Confirmed.' }), ...refusals([...BODY_REFUSALS, 401, 419, 429], { 422: onField('password', 'The provided password is incorrect.'), 429: onField('password', 'Too many login attempts. Please try again in 42 seconds.') }) },
  },
  true,
);

export const ConfirmedPasswordStatusContract = contract(
  {
    operationId: 'getUserConfirmedPasswordStatus',
    summary: 'Whether the password was confirmed recently enough',
    security: SESSION,
    response: { 200: ConfirmedStatus, ...refusals([401]) },
  },
  false,
);

export const VerificationNotificationContract = contract(
  {
    operationId: 'postEmailVerificationNotification',
    summary: 'Mail the email verification link again',
    description: '204 also when the address is already verified (nothing is sent). A few sends a window, then 429.',
    security: SESSION,
    response: { 204: NoContent, ...refusals([401, 419, 429], { 429: plain('Too many requests. Please try again in 42 seconds.') }) },
  },
  false,
);
