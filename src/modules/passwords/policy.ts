// The rules a new password must meet, wherever it is set (API, registration, reset, profile):
// 8 to 1024 characters, not one of the 10,000 most common passwords, confirmed.
import { attributeName, t } from '../i18n/translator.js';
import type { FieldErrors } from '../shared/errors.js';
import { isCommonPassword } from './common-passwords.js';

export const PASSWORD_MIN = 8;
// Long enough for any passphrase or manager-generated password; bounded so that hashing an
// attacker's megabyte costs nothing. argon2 has no 72-byte truncation, unlike bcrypt.
export const PASSWORD_MAX = 1024;

/** Field errors for a new password and its confirmation (empty when it is acceptable). */
export function checkNewPassword(password: string, confirmation: string | undefined, locale = 'en', field = 'password'): FieldErrors {
  const attribute = attributeName(field, locale);
  const messages: string[] = [];
  const length = [...password].length;
  if (length < PASSWORD_MIN) messages.push(t(locale, 'validation.min.string', { attribute, min: PASSWORD_MIN }));
  else if (length > PASSWORD_MAX) messages.push(t(locale, 'validation.max.string', { attribute, max: PASSWORD_MAX }));
  // Checked once the length is right: one message about the password itself is enough.
  else if (isCommonPassword(password)) messages.push(t(locale, 'validation.common_password', { attribute }));
  if (confirmation !== password) messages.push(t(locale, 'validation.confirmed', { attribute }));
  return messages.length === 0 ? {} : { [field]: messages };
}
