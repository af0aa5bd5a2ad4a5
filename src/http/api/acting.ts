// Who acts through the API, for the audit line of a change: the token's user, the caller's
// address, and the channel (the token's id, never its secret; null for a first-party SPA's
// session cookie), so the log tells an API write from the same change made in the panel.
import type { FastifyRequest } from 'fastify';
import type { Acting } from '../../modules/audit/audit.service.js';
import { canAccessPanel } from '../../modules/users/users.service.js';
import type { ApiCaller } from '../../plugins/types.js';

/** The Acting of an authenticated API caller. */
export function apiActing(request: FastifyRequest, caller: ApiCaller): Acting {
  const { id, name, email } = caller.user;
  return { actor: { id, name, email }, ip: request.ip, via: { channel: 'api', tokenId: caller.tokenId } };
}

/** What the documentation of such a write says of the audit log, before the line it leaves. */
export const AUDITED_FOR_ADMINS = "An administrator's call leaves the panel's audit line, saying it came through the API and with which token (its id)";

/**
 * The Acting of an administrator's call, or null for anyone else: an administrator's change to
 * what the panel also changes (a post, an account's name or password, a token) leaves the panel's
 * audit line; a member's change to their own account leaves none, as on the site's pages.
 */
export function adminActing(request: FastifyRequest, caller: ApiCaller): Acting | null {
  return canAccessPanel(caller.user) ? apiActing(request, caller) : null;
}
