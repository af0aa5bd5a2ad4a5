// A passkey's answer as the sign-in pipeline's proof, for every route that takes one: the site's
// and the panel's passkey sign-in and the site's confirmation (http/web/passkeys.ts), the panel's
// confirmation before its two-factor set-up (http/admin/two-factor.ts). In http/shared because
// both faces take one, and the faces import nothing from each other.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { freshChallenge, type PendingChallenge } from '../../modules/passkeys/passkeys.service.js';
import type { PasskeyProof } from '../../modules/sign-in/methods/passkey.js';

// The browser's answer is checked by @simplewebauthn/server; the schema only bounds its size.
export const PasskeyAnswerBody = Type.Object({ response: Type.Object({}, { additionalProperties: true, maxProperties: 16 }) });

/** The browser's answer in the body (anything; the pipeline's method checks it). */
export function passkeyAnswer(request: FastifyRequest): unknown {
  return (request.body as { response?: unknown } | undefined)?.response;
}

/** Takes the pending challenge out of the session: whatever happens next, it is used. */
function takeChallenge(request: FastifyRequest, purpose: string): PendingChallenge | null {
  const pending = request.session.passkeyAuthentication;
  delete request.session.passkeyAuthentication;
  return freshChallenge(pending, purpose);
}

/** The passkey's answer to the session's pending challenge of `purpose`, as the pipeline's proof. */
export function passkeyProof(request: FastifyRequest, purpose: string): PasskeyProof {
  return {
    pending: takeChallenge(request, purpose),
    response: passkeyAnswer(request),
    // A body that is not an answer at all is refused before the throttle counts it.
    malformed: request.validationError !== undefined,
  };
}

/** Sends a ceremony's options, the challenge kept in the session for the answer (one at a time). */
export function sendPasskeyOptions(request: FastifyRequest, reply: FastifyReply, challenge: { options: unknown; pending: PendingChallenge }): FastifyReply {
  request.session.passkeyAuthentication = challenge.pending;
  return reply.header('cache-control', 'no-store').send({ options: challenge.options });
}
