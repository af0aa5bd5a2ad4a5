// Maps keyed by names that can come from input (field names, messages, translation keys,
// placeholders) never answer with a member of Object.prototype, and never set a prototype.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import type { ErrorObject } from 'ajv';
import { formatValidationErrors, validatorCompiler } from '../../src/http/shared/validation.js';
import { oldInput } from '../../src/http/shared/forms.js';
import { t } from '../../src/modules/i18n/translator.js';
import { invalid } from '../../src/modules/shared/errors.js';
import { describeError } from '../../src/plugins/errors.js';

const NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'prototype'] as const;

const nul = (field: string): ErrorObject => ({ keyword: 'pattern', instancePath: `/${field}`, schemaPath: '#', params: { pattern: 'no NUL' }, message: 'must not contain NUL' });
const missing = (field: string): ErrorObject => ({ keyword: 'required', instancePath: '', schemaPath: '#/required', params: { missingProperty: field } });

type Check = ((data: unknown) => boolean) & { errors: ErrorObject[] | null };
const compile = (schema: object): Check => validatorCompiler({ schema, method: 'POST', url: '/test', httpPart: 'body' }) as unknown as Check;

describe('formatValidationErrors with fields named like members of Object.prototype', () => {
  it('lists each under its own key, with its messages once, and leaves the prototype alone', () => {
    const errors = NAMES.flatMap((name) => [nul(name), nul(name)]);
    const formatted = formatValidationErrors(errors);
    assert.deepEqual(Object.keys(formatted.errors), [...NAMES]);
    for (const name of NAMES) {
      assert.ok(Object.hasOwn(formatted.errors, name), name);
      assert.deepEqual(formatted.errors[name], [`The ${name.replace(/_/g, ' ')} field format is invalid.`], name);
    }
    assert.equal(Object.getPrototypeOf(formatted.errors), Object.prototype);
    assert.equal(formatted.message, 'The constructor field format is invalid.');
  });

  it('keeps only the required message of such a field, as of any other', () => {
    const formatted = formatValidationErrors([nul('toString'), missing('toString'), missing('valueOf')]);
    assert.deepEqual(formatted.errors, { toString: ['The toString field is required.'], valueOf: ['The valueOf field is required.'] });
  });
});

describe('the validator and keys the schema does not declare', () => {
  const check = compile(Type.Object({ name: Type.Optional(Type.String({ maxLength: 10 })) }));

  it('ignores an undeclared key whatever its name and value, a NUL included', () => {
    for (const name of NAMES) {
      for (const value of ['a\u0000b', '\u0001\u001f\u007f', 1, null, ['a\u0000b'], { a: 'a\u0000b' }]) {
        assert.equal(check(Object.fromEntries([[name, value]])), true, `${name}: ${JSON.stringify(value)}`);
      }
    }
  });

  it('still refuses a NUL in a declared field, and names that field only', () => {
    const body = Object.fromEntries([['name', 'a\u0000b'], ['constructor', 'a\u0000b'], ['toString', '\u0000']]);
    assert.equal(check(body), false);
    assert.deepEqual(formatValidationErrors(check.errors ?? []).errors, { name: ['The name field format is invalid.'] });
  });

  it('checks every key of a map, whose keys are all declared: a NUL under "constructor" is a 422 naming it', () => {
    const map = compile(Type.Record(Type.String(), Type.String()));
    assert.equal(map(Object.fromEntries([['constructor', 'a\u0000b'], ['__proto__', 'ok']])), false);
    assert.deepEqual(formatValidationErrors(map.errors ?? []).errors, { constructor: ['The constructor field format is invalid.'] });
  });
});

describe('translations looked up by a name from input', () => {
  it('answers the key itself for a name of Object.prototype, in every locale', () => {
    for (const locale of ['en', 'fr']) {
      for (const name of NAMES) assert.equal(t(locale, name), name, `${locale}: ${name}`);
    }
  });

  it('fills only the placeholders it was given', () => {
    assert.equal(t('en', 'a :constructor b :__proto__ c'), 'a :constructor b :__proto__ c');
    assert.equal(t('en', 'validation.required', { attribute: 'name' }), 'The name field is required.');
  });
});

describe('the form helpers', () => {
  it('translates a service message whose key and field read like names of Object.prototype as any other text', () => {
    const error = invalid(Object.fromEntries(NAMES.map((name) => [name, [{ key: name }]])));
    for (const locale of ['en', 'fr']) assert.deepEqual(error.errorsIn(locale), Object.fromEntries(NAMES.map((name) => [name, [name]])));
  });

  it('keeps every sent text field to fill the form again as an own key, __proto__ included, and no password or token', () => {
    // As the form parser builds it: an object without a prototype, `__proto__` an own key.
    const body = Object.assign(Object.create(null) as Record<string, unknown>, { ['__proto__']: 'p', constructor: 'c', toString: 't', _token: 'csrf', password: 'secret', name: 1 });
    const old = oldInput(body);
    assert.deepEqual(Object.keys(old).sort(), ['__proto__', 'constructor', 'toString']);
    assert.equal(old['__proto__'], 'p');
    assert.equal(Object.getPrototypeOf(old), Object.prototype);
  });
});

describe('describeError', () => {
  it('answers a generic 500 for an error it cannot describe, instead of throwing', () => {
    const malformed = Object.assign(new Error('internal detail'), { validation: [null] });
    assert.deepEqual(describeError(malformed), { status: 500, body: { message: 'Server Error.', errors: {} }, headers: {} });
  });
});
