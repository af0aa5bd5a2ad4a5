// Who acts through the API, for the audit line of a change: the token's user, the caller's
// address, and the channel (the token's id, never its secret; null for a first-party SPA's
// session cookie), so the log tells an API write from the same change made in the panel.
import type { FastifyRequest } from 'fastify';
import type { Acting } from '../../modules/audit/audit.service.js';
import type { ApiCaller } from '../../plugins/types.js';

/** The Acting of an authenticated API caller. */
export function apiActing(request: FastifyRequest, caller: ApiCaller): Acting {
  const { id, name, email } = caller.user;
  return { actor: { id, name, email }, ip: request.ip, via: { channel: 'api', tokenId: caller.tokenId } };
}
