// How many posts each (status, locale) has, kept by triggers in the same transaction as every
// insert, delete and status/locale change — whoever writes (API, panel, seeders, SQL). The public
// list reads its total here instead of counting index entries: at 100,000 posts a count(*) costs
// milliseconds per request.
import { sql } from 'kysely';
import { isPostgres, type AnyDb } from './helpers.js';

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('post_counts')
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('locale', 'varchar(16)', (c) => c.notNull())
    .addColumn('n', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('post_counts_pkey', ['status', 'locale'])
    .execute();
  await sql`insert into post_counts (status, locale, n) select status, locale, count(*) from posts group by status, locale`.execute(db);

  if (isPostgres(db)) {
    await sql`
      create function posts_maintain_counts() returns trigger language plpgsql as $$
      begin
        if tg_op in ('DELETE', 'UPDATE') then
          update post_counts set n = n - 1 where status = old.status and locale = old.locale;
        end if;
        if tg_op in ('INSERT', 'UPDATE') then
          insert into post_counts (status, locale, n) values (new.status, new.locale, 1)
          on conflict (status, locale) do update set n = post_counts.n + 1;
        end if;
        return null;
      end $$`.execute(db);
    await sql`
      create trigger posts_maintain_counts after insert or delete or update of status, locale on posts
      for each row execute function posts_maintain_counts()`.execute(db);
    return;
  }
  await sql`
    create trigger posts_counts_insert after insert on posts begin
      insert into post_counts (status, locale, n) values (new.status, new.locale, 1)
      on conflict (status, locale) do update set n = n + 1;
    end`.execute(db);
  await sql`
    create trigger posts_counts_delete after delete on posts begin
      update post_counts set n = n - 1 where status = old.status and locale = old.locale;
    end`.execute(db);
  await sql`
    create trigger posts_counts_update after update of status, locale on posts
    when old.status <> new.status or old.locale <> new.locale begin
      update post_counts set n = n - 1 where status = old.status and locale = old.locale;
      insert into post_counts (status, locale, n) values (new.status, new.locale, 1)
      on conflict (status, locale) do update set n = n + 1;
    end`.execute(db);
}

export async function down(db: AnyDb): Promise<void> {
  if (isPostgres(db)) {
    await sql`drop trigger posts_maintain_counts on posts`.execute(db);
    await sql`drop function posts_maintain_counts()`.execute(db);
  } else {
    for (const name of ['posts_counts_insert', 'posts_counts_delete', 'posts_counts_update']) {
      await sql`drop trigger ${sql.raw(name)}`.execute(db);
    }
  }
  await db.schema.dropTable('post_counts').execute();
}
