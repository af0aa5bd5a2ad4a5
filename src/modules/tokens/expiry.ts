// When a token stops working, by Sanctum's two rules: the global lifetime (SANCTUM_EXPIRATION)
// counted from its creation, and its own expires_at; whichever comes first.

/** The moment (ms since the epoch) the token expires, or null when it never does. */
export function effectiveExpiry(createdAt: string, expiresAt: string | null, lifetimeMinutes: number | null): number | null {
  const byAge = lifetimeMinutes === null ? null : Date.parse(createdAt) + lifetimeMinutes * 60_000;
  const own = expiresAt === null ? null : Date.parse(expiresAt);
  if (byAge === null) return own;
  return own === null ? byAge : Math.min(byAge, own);
}
