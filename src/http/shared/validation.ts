// Request validation: the TypeBox schemas declared on routes are compiled by Ajv, and Ajv's
// errors are turned into Laravel's field → messages map. Bodies are validated strictly (a number
// is not a string); query strings and path parameters are coerced, since they are always text.
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { t, type Message } from '../../modules/i18n/translator.js';
import { translateFields, type FieldErrors } from '../../modules/shared/errors.js';

// ajv-formats is CommonJS; under NodeNext its default export sits one level down.
type AddFormats = (ajv: Ajv, formats: string[]) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as unknown as AddFormats;

function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({ allErrors: true, coerceTypes, useDefaults: true, removeAdditional: true, strict: false });
  addFormats(ajv, ['email', 'date-time', 'uri']);
  return ajv;
}

const strictAjv = makeAjv(false);
const coercingAjv = makeAjv(true);

// Ajv reports missing properties before invalid ones; Laravel lists fields in the order the rules
// declare them, and its `message` is the first of those. Errors are sorted by the schema's order.
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strictAjv : coercingAjv;
  const validate = ajv.compile(schema as object);
  const order = Object.keys((schema as { properties?: object }).properties ?? {});
  const declared = declaredFields(schema);
  const rank = (error: ErrorObject): number => {
    const index = order.indexOf(fieldOf(error));
    return index === -1 ? order.length : index;
  };
  const sorted = (data: unknown): boolean => {
    const valid = validate(data);
    const errors = [...(valid ? [] : (validate.errors ?? [])), ...nulErrors(data, declared)];
    sorted.errors = errors.length === 0 ? null : errors.sort((a, b) => rank(a) - rank(b));
    return errors.length === 0;
  };
  sorted.errors = null as ErrorObject[] | null;
  return sorted;
};

/**
 * The fields a schema validates, or null when it validates every key (no `properties`, or
 * `additionalProperties`/`patternProperties` with a schema of their own).
 *
 * Every route, JSON or form, body or query string, reads only the fields its schema declares,
 * and ignores any other key whatever its name or value, as Laravel's validated() does:
 * `{"constructor": "a\u0000b"}`, `toString=x` or `?valueOf=1` is an unknown field like `foo`,
 * never a 422 and never a 500. (The JSON parser refuses only the two shapes that pollute
 * prototypes, `__proto__` and `constructor.prototype`, with a 400: see app.ts.)
 */
function declaredFields(schema: unknown): ReadonlySet<string> | null {
  const object = schema as { properties?: object; additionalProperties?: unknown; patternProperties?: unknown };
  if (typeof object.properties !== 'object' || object.properties === null) return null;
  if (object.patternProperties !== undefined || (typeof object.additionalProperties === 'object' && object.additionalProperties !== null)) return null;
  return new Set(Object.keys(object.properties));
}

/**
 * A NUL character has no place in text, and PostgreSQL refuses it in every text column (the
 * query would fail with a 500): such a string is a format error of its field. Only the
 * declared fields are looked at (an unknown one is never read, so it is ignored as a whole).
 * Walks the value without recursion, since bodies may nest thousands of levels deep.
 */
function nulErrors(data: unknown, declared: ReadonlySet<string> | null): ErrorObject[] {
  const errors: ErrorObject[] = [];
  const stack: Array<[unknown, string]> = [];
  if (declared !== null && typeof data === 'object' && data !== null && !Array.isArray(data)) {
    for (const [key, item] of Object.entries(data)) if (declared.has(key)) stack.push([item, `/${key}`]);
  } else {
    stack.push([data, '']);
  }
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) errors.push({ keyword: 'pattern', instancePath: path, schemaPath: '#', params: { pattern: 'no NUL' }, message: 'must not contain NUL' });
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) stack.push([item, `${path}/${key}`]);
    }
  }
  return errors;
}

function fieldOf(error: ErrorObject): string {
  if (error.keyword === 'required') return String((error.params as { missingProperty: string }).missingProperty);
  return error.instancePath.replace(/^\//, '').split('/')[0] ?? '';
}

function messageFor(error: ErrorObject, attribute: string): Message {
  // Ajv only fills parentSchema in verbose mode; the limit of a length or range check is in params.
  const limit = (error.params as { limit?: number }).limit ?? 0;
  switch (error.keyword) {
    case 'required':
      return { key: 'validation.required', attribute };
    case 'type': {
      const type = (error.params as { type: string }).type;
      if (type === 'integer' || type === 'number') return { key: 'validation.integer', attribute };
      if (type === 'boolean') return { key: 'validation.boolean', attribute };
      if (type === 'array') return { key: 'validation.array', attribute };
      return { key: 'validation.string', attribute };
    }
    case 'format':
      return { key: (error.params as { format: string }).format === 'email' ? 'validation.email' : 'validation.date', attribute };
    case 'minLength':
      // An empty string is a missing value, as Laravel's `required` treats it.
      if (limit === 1) return { key: 'validation.required', attribute };
      return { key: 'validation.min.string', attribute, replace: { min: limit } };
    case 'maxLength':
      return { key: 'validation.max.string', attribute, replace: { max: limit } };
    case 'minimum':
      return { key: 'validation.min.numeric', attribute, replace: { min: limit } };
    case 'maximum':
      return { key: 'validation.max.numeric', attribute, replace: { max: limit } };
    case 'enum':
    case 'const':
      return { key: 'validation.in', attribute };
    default:
      return { key: 'validation.regex', attribute };
  }
}

const sameMessage = (a: Message, b: Message): boolean => a.key === b.key && a.attribute === b.attribute && JSON.stringify(a.replace) === JSON.stringify(b.replace);

/**
 * Turns Ajv errors into `{field: [messages]}`, each message a key still to translate; null for
 * a value that names no field (a body that is not an object).
 * Field names can be keys the client chose (a schema with a map, a body that is not an object),
 * so they are collected in a Map: on a plain object, `constructor` or `toString` would find
 * Object.prototype's members (a 500 once) and `__proto__` would set the prototype. The result
 * has own keys only (Object.fromEntries defines them; it never calls the `__proto__` setter).
 */
export function validationMessages(errors: ErrorObject[]): Record<string, Message[]> | null {
  const fields = new Map<string, Message[]>();
  for (const error of errors) {
    // anyOf/union wrappers repeat what their branches said.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    // The `null` branch of a nullable field failing is not news: the other branch says why.
    if (error.keyword === 'type' && (error.params as { type?: string }).type === 'null') continue;
    const field = fieldOf(error);
    if (field === '') continue;
    const message = messageFor(error, field);
    const list = fields.get(field) ?? [];
    if (!list.some((known) => sameMessage(known, message))) list.push(message);
    fields.set(field, list);
  }
  // A missing value fails `required` only: Laravel runs no other rule on an empty field.
  for (const [field, messages] of fields) {
    if (messages.some((message) => message.key === 'validation.required')) fields.set(field, [{ key: 'validation.required', attribute: field }]);
  }
  return fields.size === 0 ? null : Object.fromEntries(fields);
}

/** Ajv errors as the answer shows them in `locale`: the first message, and every field's; a body that is not an object gets its own message. */
export function formatValidationErrors(errors: ErrorObject[], locale = 'en'): { message: string; errors: FieldErrors } {
  const messages = validationMessages(errors);
  if (messages === null) return { message: t(locale, 'validation.object'), errors: {} };
  const result = translateFields(locale, messages);
  return { message: Object.values(result)[0]![0]!, errors: result };
}
