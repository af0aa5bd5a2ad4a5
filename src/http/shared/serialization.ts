// Response serialization: Fastify compiles each route's response schema with fast-json-stringify
// when the app is built. The compiled function depends only on the schema and the shared schemas
// (app.addSchema) it may refer to, so it is kept by their text and reused by every app built in
// the process: one app in production, hundreds in the test suite, where compiling was a fifth of
// each app's build. As validation.ts does with its Ajv instances, which keep what they compiled.
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type Serializer = (data: unknown) => string;
type RouteSchema = { schema: object; method: string; url: string; httpStatus: string };

const select = SerializerSelector() as (externals: unknown, options: unknown) => (route: RouteSchema) => Serializer;

/**
 * What was compiled, by the JSON of the shared schemas and of the response schema: Fastify keeps
 * its own copy of each shared schema per app, and many routes build their response schemas as
 * they register, so equal schemas are equal in text, not as objects. (fast-json-stringify reads
 * nothing JSON leaves out: TypeBox's symbol keys are for TypeBox.)
 */
const compiled = new Map<string, Serializer>();

/** Fastify's `schemaController.compilersFactory.buildSerializer`: its own compiler, with what it compiled kept. */
export function buildSerializer(externalSchemas: unknown, serializerOpts: unknown): (route: RouteSchema) => Serializer {
  const compile = select(externalSchemas, serializerOpts);
  // Options of fast-json-stringify change what it compiles; buildApp sets none. Were any set, the
  // compiled functions are not shared.
  if (serializerOpts !== undefined && Object.keys(serializerOpts as object).length > 0) return compile;
  const shared = JSON.stringify(externalSchemas ?? {});
  return (route) => {
    const key = `${shared}\n${JSON.stringify(route.schema)}`;
    let serialize = compiled.get(key);
    if (serialize === undefined) {
      serialize = compile(route);
      compiled.set(key, serialize);
    }
    return serialize;
  };
}
