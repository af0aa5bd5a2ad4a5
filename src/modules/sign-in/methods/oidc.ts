// A provider's verified claims (OpenID Connect), on the site only: modules/oidc checked the answer
// (state, code exchange, the ID token's signature against the provider's keys, iss, aud, exp,
// nonce); this method only finds the account, or makes one for a subject never seen
// (modules/identities). Nothing is counted: the state and nonce bind the answer to the browser
// session that asked for it, and the provider throttles its own login.
import type { IdentityService, ProviderClaims } from '../../identities/identities.service.js';
import { AppError } from '../../shared/errors.js';
import type { SignInMethod } from '../method.js';

export type ProviderProof = { claims: ProviderClaims };

/**
 * A provider sign-in that leads nowhere, for its own reason (the face says which): an account
 * already has the email (never linked silently), or the provider gave no email to make one with.
 */
export class ProviderRefusal extends AppError {
  constructor(readonly reason: 'email-taken' | 'no-email' | 'refused') {
    super(422, 'The provider sign-in was refused.');
    this.name = 'ProviderRefusal';
  }
}

export function oidcMethod(deps: { identities: Pick<IdentityService, 'signIn'> }): SignInMethod<ProviderProof> {
  return {
    name: 'oidc',
    // A provider sign-in never opens the panel: the panel keeps its own login.
    realms: ['site'],
    // One factor, whatever the provider did: an account with two-factor on gives its code next.
    strong: false,
    throttle: () => null,
    async verify({ claims }) {
      const result = await deps.identities.signIn(claims);
      if (result.kind === 'signed-in' || result.kind === 'created') return result.user;
      throw new ProviderRefusal(result.kind);
    },
    refused: () => new ProviderRefusal('refused'),
  };
}
