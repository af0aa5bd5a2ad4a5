// Schemas shared by the API routes. They validate requests, shape responses (fields not listed
// are never serialized) and generate the OpenAPI document.
import { Type } from '@sinclair/typebox';

/**
 * A nullable timestamp in a response, as `type: ["string", "null"]` (valid JSON Schema 2020-12 and
 * OpenAPI 3.1). An anyOf union would make the serializer run a validator on every response to
 * pick the branch; a type list is serialized directly.
 */
export const NullableTimestamp = (description?: string) =>
  Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'date-time', ...(description === undefined ? {} : { description }) });

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

export const UserRef = ref(UserSchema);
