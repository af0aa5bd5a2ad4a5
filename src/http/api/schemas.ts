// Schemas shared by the API routes. They validate requests, shape responses (fields not listed
// are never serialized) and generate the OpenAPI document.
import { Type, type TSchema } from '@sinclair/typebox';

/**
 * A nullable timestamp in a response, as `type: ["string", "null"]` (valid JSON Schema 2020-12 and
 * OpenAPI 3.1). An anyOf union would make the serializer run a validator on every response to
 * pick the branch; a type list is serialized directly.
 */
export const NullableTimestamp = (description?: string) =>
  Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'date-time', ...(description === undefined ? {} : { description }) });

export const ErrorEnvelope = Type.Object(
  {
    message: Type.String(),
    errors: Type.Record(Type.String(), Type.Array(Type.String())),
  },
  { $id: 'ErrorEnvelope', description: 'Every API failure: a summary and the messages of each failing field.' },
);

export const UserSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    email: Type.String({ format: 'email' }),
    email_verified_at: NullableTimestamp(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'User' },
);

const ref = (schema: { $id?: string }) => Type.Ref(schema.$id!);

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

export const UserRef = ref(UserSchema);

export const NoContent = Type.Null({ description: 'No content.' });
