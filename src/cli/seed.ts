// Demo content for a development database (`npm run cli -- db:seed`): a few accounts, one of
// them an administrator, 44 posts in English and French in every status (most French ones
// translations of English ones, sharing their slug), and the settings.
// Safe to run twice: what already exists (same email, same slug in the same language, same key)
// is left alone.
import type { Services } from '../services.js';
import type { PostStatus } from '../modules/posts/posts.repository.js';
import { slugify } from '../modules/posts/slug.js';

/** Every demo account has this password, as Laravel's factories do: it is demo data, not a secret. */
export const DEMO_PASSWORD = 'password';

export const DEMO_USERS = [
  { name: 'Ada Admin', email: 'admin@example.com', verified: true, admin: true },
  { name: 'Alice Martin', email: 'alice@example.com', verified: true, admin: false },
  { name: 'Bob Unverified', email: 'bob@example.com', verified: false, admin: false },
  { name: 'Camille Dupont', email: 'camille@example.fr', verified: true, admin: false },
] as const;

export const DEMO_SETTINGS: readonly { key: string; value: unknown; isPublic: boolean }[] = [
  { key: 'site_name', value: 'Tessera', isPublic: true },
  { key: 'site_description', value: 'Accounts, tokens and posts.', isPublic: true },
  { key: 'default_locale', value: 'en', isPublic: true },
  { key: 'locales', value: ['en', 'fr'], isPublic: true },
  { key: 'posts_per_page', value: 15, isPublic: true },
  // Private: only the panel sees these; GET /api/settings must never return them.
  { key: 'contact_email', value: 'editors@example.com', isPublic: false },
  { key: 'moderation_notes', value: 'Check French posts with Camille before publishing.', isPublic: false },
];

const TOPICS = {
  en: [
    'Getting started with personal access tokens',
    'Why we hash tokens with SHA-256',
    'Revoking a token from every device',
    'Abilities: limiting what a token may do',
    'Paginating the posts API',
    'ETags and conditional requests',
    'SQLite in production, honestly',
    'Moving from SQLite to PostgreSQL',
    'Argon2id parameters explained',
    'Importing users from Laravel',
    'Email verification without surprises',
    'Designing error envelopes',
    'Rate limits that are fair',
    'Structured logs without secrets',
    'Graceful shutdown in Node.js',
    'Writing tests against real databases',
    'Localising an API',
    'The admin panel tour',
    'Markdown, sanitised',
    'Password reset links that expire',
    'Keeping last_used_at cheap',
    'A checklist before going live',
    'What a 422 should tell a client',
    'Release notes: spring edition',
  ],
  fr: [
    'Premiers pas avec les jetons d’accès',
    'Pourquoi les jetons sont hachés',
    'Révoquer un jeton sur tous les appareils',
    'Les capacités d’un jeton',
    'Paginer l’API des articles',
    'ETag et requêtes conditionnelles',
    'SQLite en production',
    'Passer de SQLite à PostgreSQL',
    'Les paramètres d’Argon2id',
    'Importer des utilisateurs Laravel',
    'Vérifier une adresse e-mail',
    'Des erreurs lisibles',
    'Des limites de débit équitables',
    'Des journaux sans secrets',
    'Arrêter proprement un service Node.js',
    'Tester avec de vraies bases de données',
    'Traduire une API',
    'Visite du panneau d’administration',
    'Le Markdown, nettoyé',
    'Notes de version : édition d’été',
  ],
} as const;

// The first 19 French topics translate the English topic at the same place, and so share its
// slug (a slug is unique per language): the blog shows them as one post in two languages. The
// last one, summer's release notes, has no English original (the English notes are spring's).
const TRANSLATIONS = 19;

function slugFor(locale: 'en' | 'fr', index: number, title: string): string {
  const original = locale === 'fr' && index < TRANSLATIONS ? TOPICS.en[index] : undefined;
  return slugify(original ?? title);
}

// Which posts are not simply published: drafts have no date, archived ones had one, and a
// scheduled one is published in the future (so the public list must not show it yet).
function statusFor(index: number): { status: PostStatus; scheduled: boolean } {
  if (index % 8 === 3) return { status: 'draft', scheduled: false };
  if (index % 8 === 6) return { status: 'archived', scheduled: false };
  if (index === 1) return { status: 'published', scheduled: true };
  return { status: 'published', scheduled: false };
}

function body(title: string, locale: 'en' | 'fr'): string {
  return locale === 'en'
    ? `## ${title}\n\nThis is demo content for **Tessera**.\n\n- tokens are \`<id>|<secret>\`\n- only a hash is stored\n\n\`\`\`sh\ncurl -H "Authorization: Bearer $TOKEN" /api/user\n\`\`\`\n`
    : `## ${title}\n\nCeci est un contenu de démonstration pour **Tessera**.\n\n- les jetons ont la forme \`<id>|<secret>\`\n- seule une empreinte est conservée\n`;
}

export type SeedResult = { users: number; posts: number; settings: number };

/** Inserts the demo content that is missing and returns how much was created. */
export async function seedDemo(services: Services, now: Date = new Date()): Promise<SeedResult> {
  const result: SeedResult = { users: 0, posts: 0, settings: 0 };
  const ids = new Map<string, number>();
  for (const account of DEMO_USERS) {
    let user = await services.users.findByEmail(account.email);
    if (user === undefined) {
      user = await services.users.create({ ...account, password: DEMO_PASSWORD });
      result.users += 1;
    }
    ids.set(account.email, user.id);
  }
  const authors = {
    en: [ids.get('admin@example.com'), ids.get('alice@example.com')],
    fr: [ids.get('camille@example.fr'), ids.get('admin@example.com')],
  };

  const existing = new Set((await services.settings.all()).map((setting) => setting.key));
  for (const setting of DEMO_SETTINGS) {
    if (existing.has(setting.key)) continue;
    await services.settings.put(setting.key, setting.value, setting.isPublic);
    result.settings += 1;
  }

  const hour = 3_600_000;
  for (const locale of ['en', 'fr'] as const) {
    for (const [index, title] of TOPICS[locale].entries()) {
      const slug = slugFor(locale, index, title);
      if ((await services.posts.findAny(slug, locale)) !== undefined) continue;
      const { status, scheduled } = statusFor(index);
      const publishedAt = status === 'draft' ? null : new Date(now.getTime() + (scheduled ? 72 : -(index + 1) * 26) * hour).toISOString();
      await services.posts.create(authors[locale][index % 2] ?? null, {
        title,
        slug,
        excerpt: `${title}.`,
        body: body(title, locale),
        locale,
        status,
        published_at: publishedAt,
      });
      result.posts += 1;
    }
  }
  return result;
}
