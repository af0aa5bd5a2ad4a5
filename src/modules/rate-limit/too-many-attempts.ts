// Laravel's answer to a request over a limit: 429 "Too Many Attempts." with X-RateLimit-Limit,
// X-RateLimit-Remaining 0, Retry-After and X-RateLimit-Reset (Unix time). The API's request
// limits (plugins/rate-limit.ts) and its sign-in attempts (modules/sign-in) answer the same.
import { AppError } from '../shared/errors.js';

export const TOO_MANY_ATTEMPTS = 'Too Many Attempts.';

/** The 429 of a limit of `limit` a window, to retry in `retryAfterSeconds` (at least 1). */
export function tooManyAttempts(limit: number, retryAfterSeconds: number): AppError {
  const seconds = Math.max(1, retryAfterSeconds);
  return new AppError(429, TOO_MANY_ATTEMPTS, {}, {
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': '0',
    'retry-after': String(seconds),
    'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + seconds),
  });
}
