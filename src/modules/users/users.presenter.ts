// The only shape of a user that leaves the service: an allowlist, so a password hash or a
// remember token can never reach a response.
import type { AuthUser } from './auth-user.js';

export type PublicUser = {
  id: number;
  name: string;
  email: string;
  email_verified_at: string | null;
  created_at: string;
  updated_at: string;
};

export function presentUser(user: AuthUser): PublicUser {
  return {
    id: user.id,
    name: user.name,
    email: user.email,
    email_verified_at: user.email_verified_at,
    created_at: user.created_at,
    updated_at: user.updated_at,
  };
}
