// One contract for the forms of the site and the panel: errors carry their message keys from
// validation and the domain to the answer, which translates them for its reader; the API keeps
// its English.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ErrorObject } from 'ajv';
import type { FastifyRequest } from 'fastify';
import { refusal, schemaErrors } from '../../src/http/shared/forms.js';
import { formatValidationErrors, validationMessages } from '../../src/http/shared/validation.js';
import { AppError, ValidationError, invalid } from '../../src/modules/shared/errors.js';
import { EMAIL_TAKEN, TAKEN_EMAIL } from '../../src/modules/users/users.service.js';

const required = (field: string): ErrorObject => ({ keyword: 'required', instancePath: '', schemaPath: '#/required', params: { missingProperty: field } });
const tooShort = (field: string, limit: number): ErrorObject => ({ keyword: 'minLength', instancePath: `/${field}`, schemaPath: '#', params: { limit } });
const notObject: ErrorObject = { keyword: 'type', instancePath: '', schemaPath: '#/type', params: { type: 'object' } };
const failed = (validation: ErrorObject[] | undefined) =>
  ({ validationError: validation === undefined ? undefined : Object.assign(new Error('invalid'), { validation }) }) as unknown as FastifyRequest;

describe('errors that carry their message key', () => {
  it('answers a domain refusal in English to the API and in each reader language to a form', () => {
    const error = invalid({ email: [TAKEN_EMAIL] });
    assert.equal(error.status, 422);
    assert.deepEqual(error.errors, { email: [EMAIL_TAKEN] });
    assert.equal(error.message, 'The email has already been taken.');
    assert.deepEqual(refusal(error, 'en').errors, { email: ['The email has already been taken.'] });
    assert.deepEqual(refusal(error, 'fr'), {
      status: 422,
      message: 'La valeur du champ adresse e-mail est déjà utilisée.',
      errors: { email: ['La valeur du champ adresse e-mail est déjà utilisée.'] },
      headers: {},
    });
  });

  it('keeps a text already written as it is, in every language', () => {
    const error = new ValidationError({ name: ['Déjà écrit.'] });
    assert.deepEqual(refusal(error, 'en').errors, { name: ['Déjà écrit.'] });
    assert.deepEqual(refusal(error, 'fr').errors, { name: ['Déjà écrit.'] });
  });

  it('passes a 429 on with its headers, and throws any other error on to the error handler', () => {
    const limited = new AppError(429, 'Too many.', { email: ['Too many.'] }, { 'retry-after': '60' });
    assert.deepEqual(refusal(limited, 'fr'), { status: 429, message: 'Too many.', errors: { email: ['Too many.'] }, headers: { 'retry-after': '60' } });
    const missing = new AppError(404, 'Not Found.');
    assert.throws(() => refusal(missing, 'en'), (error) => error === missing);
    const crash = new Error('boom');
    assert.throws(() => refusal(crash, 'en'), (error) => error === crash);
  });
});

describe('schema failures', () => {
  it('are message keys of their field, with a missing value reported as required only', () => {
    assert.deepEqual(validationMessages([tooShort('password', 1), tooShort('name', 3), required('email')]), {
      password: [{ key: 'validation.required', attribute: 'password' }],
      name: [{ key: 'validation.min.string', attribute: 'name', replace: { min: 3 } }],
      email: [{ key: 'validation.required', attribute: 'email' }],
    });
    assert.equal(validationMessages([notObject]), null);
  });

  it('are translated with the field name of the reader language', () => {
    assert.deepEqual(formatValidationErrors([required('password')], 'fr').errors, { password: ['Le champ mot de passe est obligatoire.'] });
    assert.deepEqual(schemaErrors(failed([required('password')]), 'en'), { password: ['The password field is required.'] });
  });

  it('are an empty map for a form that passed, and a failure of the whole form when no field is named', () => {
    assert.deepEqual(schemaErrors(failed(undefined), 'en'), {});
    const whole = schemaErrors(failed([notObject]), 'en');
    assert.deepEqual(Object.keys(whole), ['_form']);
    assert.equal(whole._form?.length, 1);
  });
});
