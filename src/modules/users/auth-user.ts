// A user as an authenticated request knows it: the fields handlers may need, never a password
// hash or a remember token.

export type AuthUser = {
  id: number;
  name: string;
  email: string;
  email_verified_at: string | null;
  is_admin: number;
  created_at: string;
  updated_at: string;
};
