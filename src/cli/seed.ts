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

// People's names, not labels: the one who has not confirmed their address yet is a reader like
// the others (the dashboard's banner says what is missing).
export const DEMO_USERS = [
  { name: 'Grace Hopper', email: 'admin@example.com', verified: true, admin: true },
  { name: 'Alice Martin', email: 'alice@example.com', verified: true, admin: false },
  { name: 'Bruno Lefèvre', email: 'bruno@example.com', verified: false, admin: false },
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

// Each post's title and its excerpt: the list shows both, so the excerpt says something more.
const TOPICS = {
  en: [
    ['Getting started with personal access tokens', 'Issue a token, send it as a bearer header, and read your own account in three commands.'],
    ['Why we hash tokens with SHA-256', 'A stolen database should not hand out working tokens: only a digest of each secret is kept.'],
    ['Revoking a token from every device', 'One click ends a lost laptop\'s access, and the next request it makes is refused.'],
    ['Abilities: limiting what a token may do', 'Give a script read access to posts and nothing else, and see what a 403 looks like.'],
    ['Paginating the posts API', 'Pages, links to the next and previous ones, and why the total is worth its query.'],
    ['ETags and conditional requests', 'Ask again with If-None-Match and get an empty 304 when nothing changed.'],
    ['SQLite in production, honestly', 'Write-ahead logging, a busy timeout and one writer: where SQLite shines and where it stops.'],
    ['Moving from SQLite to PostgreSQL', 'The same migrations, the same tests, and the steps to move a live site across.'],
    ['Argon2id parameters explained', 'Memory, passes and parallelism: how the password hash was tuned for this machine.'],
    ['Importing users from Laravel', 'Bring accounts and their bcrypt hashes over; passwords upgrade quietly at the next sign-in.'],
    ['Email verification without surprises', 'Signed links that expire, a resend that cannot be abused, and what an unverified reader may do.'],
    ['Designing error envelopes', 'One shape for every failure, with a message for people and field errors for forms.'],
    ['Rate limits that are fair', 'Per account and per address, with Retry-After, so one noisy client slows only itself.'],
    ['Structured logs without secrets', 'Request lines as JSON, with the tokens, passwords and cookies left out on purpose.'],
    ['Graceful shutdown in Node.js', 'Stop accepting, finish what is running, close the database: a deploy nobody notices.'],
    ['Writing tests against real databases', 'No mocks of our own storage: each test gets a fresh copy of a migrated database.'],
    ['Localising an API', 'Error messages follow Accept-Language while field names stay put for programs.'],
    ['The admin panel tour', 'Users, posts, settings, tokens and the audit log: a walk through each page.'],
    ['Markdown, sanitised', 'Write in Markdown; the HTML that reaches readers keeps the formatting and drops the scripts.'],
    ['Password reset links that expire', 'One use, one hour, and the same answer whether or not the address has an account.'],
    ['Keeping last_used_at cheap', 'Recording when a token was last used without a write on every request.'],
    ['A checklist before going live', 'Keys, backups, mail, TLS and the health check: what to tick before the first visitor.'],
    ['What a 422 should tell a client', 'Every invalid field at once, each with a sentence a person can act on.'],
    ['Release notes: spring edition', 'Passkeys, a faster blog and a panel that remembers your sorting.'],
  ],
  fr: [
    ['Premiers pas avec les jetons d’accès', 'Créez un jeton, envoyez-le dans l’en-tête Authorization et lisez votre compte en trois commandes.'],
    ['Pourquoi les jetons sont hachés', 'Une base volée ne doit pas livrer de jetons valides : seule une empreinte de chaque secret est gardée.'],
    ['Révoquer un jeton sur tous les appareils', 'Un clic suffit pour couper l’accès d’un ordinateur perdu ; sa requête suivante est refusée.'],
    ['Les capacités d’un jeton', 'Autorisez un script à lire les articles et rien d’autre, et voyez à quoi ressemble un 403.'],
    ['Paginer l’API des articles', 'Les pages, les liens vers la suivante et la précédente, et pourquoi le total vaut sa requête.'],
    ['ETag et requêtes conditionnelles', 'Redemandez avec If-None-Match et recevez un 304 vide quand rien n’a changé.'],
    ['SQLite en production', 'Journal d’écriture anticipée, délai d’attente et un seul écrivain : les forces et les limites de SQLite.'],
    ['Passer de SQLite à PostgreSQL', 'Les mêmes migrations, les mêmes tests, et les étapes pour déplacer un site en service.'],
    ['Les paramètres d’Argon2id', 'Mémoire, passes et parallélisme : comment le hachage des mots de passe a été réglé.'],
    ['Importer des utilisateurs Laravel', 'Reprenez les comptes et leurs empreintes bcrypt ; les mots de passe se mettent à jour à la connexion.'],
    ['Vérifier une adresse e-mail', 'Des liens signés qui expirent, un renvoi qu’on ne peut pas détourner, et ce que peut faire un lecteur non vérifié.'],
    ['Des erreurs lisibles', 'Une seule forme pour chaque échec : un message pour les personnes, des erreurs par champ pour les formulaires.'],
    ['Des limites de débit équitables', 'Par compte et par adresse, avec Retry-After : un client bruyant ne ralentit que lui-même.'],
    ['Des journaux sans secrets', 'Des lignes de requête en JSON, sans jetons, mots de passe ni cookies, volontairement.'],
    ['Arrêter proprement un service Node.js', 'Ne plus accepter, finir ce qui tourne, fermer la base : un déploiement que personne ne remarque.'],
    ['Tester avec de vraies bases de données', 'Aucune imitation de notre stockage : chaque test reçoit une copie neuve d’une base migrée.'],
    ['Traduire une API', 'Les messages d’erreur suivent Accept-Language, les noms des champs restent les mêmes pour les programmes.'],
    ['Visite du panneau d’administration', 'Utilisateurs, articles, réglages, jetons et journal d’audit : une promenade page par page.'],
    ['Le Markdown, nettoyé', 'Écrivez en Markdown ; le HTML qui parvient aux lecteurs garde la mise en forme et perd les scripts.'],
    ['Notes de version : édition d’été', 'Des images dans les articles, un aperçu en direct et un journal d’audit où chercher.'],
  ],
} as const;

// The first 19 French topics translate the English topic at the same place, and so share its
// slug (a slug is unique per language): the blog shows them as one post in two languages. The
// last one, summer's release notes, has no English original (the English notes are spring's).
const TRANSLATIONS = 19;

function slugFor(locale: 'en' | 'fr', index: number, title: string): string {
  const original = locale === 'fr' && index < TRANSLATIONS ? TOPICS.en[index]?.[0] : undefined;
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

// The page shows the title above the body: the body starts with its text, not the title again.
function body(excerpt: string, locale: 'en' | 'fr'): string {
  return locale === 'en'
    ? `${excerpt}\n\nThis is demo content for **Tessera**.\n\n## Try it\n\n- tokens are \`<id>|<secret>\`\n- only a hash is stored\n\n\`\`\`sh\ncurl -H "Authorization: Bearer $TOKEN" /api/user\n\`\`\`\n`
    : `${excerpt}\n\nCeci est un contenu de démonstration pour **Tessera**.\n\n## À essayer\n\n- les jetons ont la forme \`<id>|<secret>\`\n- seule une empreinte est conservée\n`;
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
    for (const [index, [title, excerpt]] of TOPICS[locale].entries()) {
      const slug = slugFor(locale, index, title);
      if ((await services.posts.findAny(slug, locale)) !== undefined) continue;
      const { status, scheduled } = statusFor(index);
      const publishedAt = status === 'draft' ? null : new Date(now.getTime() + (scheduled ? 72 : -(index + 1) * 26) * hour).toISOString();
      await services.posts.create(authors[locale][index % 2] ?? null, {
        title,
        slug,
        excerpt,
        body: body(excerpt, locale),
        locale,
        status,
        published_at: publishedAt,
      });
      result.posts += 1;
    }
  }
  return result;
}
