// Token abilities. A token carries a list; `*` means unrestricted (what POST /api/tokens issues).
// user:write guards the account itself (PUT /api/user, PUT /api/user/password, DELETE
// /api/tokens): a token made for reading posts must not be able to take the account over.
// First-party SPA sessions carry `*`.

export const ABILITIES = ['posts:read', 'posts:write', 'user:write'] as const;
export type Ability = (typeof ABILITIES)[number];

/** True when a token with these abilities may perform `ability`. */
export function can(abilities: readonly string[], ability: Ability): boolean {
  return abilities.includes('*') || abilities.includes(ability);
}

/** Reads the stored JSON list, treating anything unreadable as "no abilities". */
export function parseAbilities(json: string): string[] {
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
  } catch {
    return [];
  }
}
