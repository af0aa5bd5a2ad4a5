// Response schemas every face and plugin may name: the error envelope and an empty answer. The
// API registers ErrorEnvelope; openapi.ts and stateful.ts describe their routes with these.
import { Type, type Static, type TSchema } from '@sinclair/typebox';

export const ErrorEnvelope = Type.Object(
  {
    message: Type.String(),
    errors: Type.Record(Type.String(), Type.Array(Type.String())),
  },
  {
    $id: 'ErrorEnvelope',
    description: 'Every API failure: a summary and the messages of each failing field.',
    examples: [{ message: 'The email field is required.', errors: { email: ['The email field is required.'], device_name: ['The device name field is required.'] } }],
  },
);

/** The envelope's value: what an error answer (JSON, or the message of an error page) carries. */
export type ErrorBody = Static<typeof ErrorEnvelope>;

const STATUS_TEXT: Record<number, string> = {
  400: 'Malformed request (e.g. invalid JSON).',
  401: 'Missing, invalid, revoked or expired token.',
  403: 'The token lacks the ability, or the user is not allowed.',
  404: 'Not found.',
  405: 'Method not allowed.',
  413: 'Body too large.',
  415: 'Unsupported content type.',
  419: 'CSRF token mismatch (cookie-authenticated requests).',
  422: 'Validation failed.',
  429: 'Too many requests.',
  500: 'Server error.',
  503: 'Service unavailable (database down).',
};

/** Error responses of a route, each the envelope, described for the OpenAPI document. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const all = [...new Set([...statuses, 429, 500])];
  return Object.fromEntries(all.map((status) => [status, Type.Ref('ErrorEnvelope', { description: STATUS_TEXT[status] ?? 'Error.' })]));
}

export const NoContent = Type.Null({ description: 'No content.' });
