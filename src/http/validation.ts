// Two validators: request bodies are checked strictly (a string is not a
// number), while query strings, params and headers arrive as text and are
// coerced to their declared types. Both also know the JSON Schema 2019-09
// keywords that OpenAPI 3.1 documents may carry (dependentRequired,
// dependentSchemas, minContains/maxContains), which Ajv's draft-07 class lacks.
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import nextVocabularyModule from 'ajv/dist/vocabularies/next.js';
import type { FastifySchemaCompiler } from 'fastify';

const Ajv = AjvModule.default;
const addFormats = addFormatsModule.default;
const nextVocabulary = nextVocabularyModule.default;

function makeAjv(coerceTypes: boolean | 'array') {
  const ajv = new Ajv({ allErrors: true, coerceTypes, useDefaults: true, removeAdditional: false, strict: false, verbose: true });
  addFormats(ajv);
  ajv.addVocabulary(nextVocabulary);
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv('array');

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};

/** A body-style validator (no coercion) for JSON that is not a request body: MCP tool arguments. */
export function compileStrict(schema: object) {
  return bodyAjv.compile(schema);
}
