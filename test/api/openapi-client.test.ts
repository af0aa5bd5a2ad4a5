// A client nobody here wrote by hand: types generated from the served document by
// openapi-typescript (its CLI, as a team that generates its clients runs it), used through
// openapi-fetch by a small client written as such a team would (no `any`, no casts), compiled by
// the project's TypeScript with --strict. Lines marked @ts-expect-error fail the compile when
// the document's types are looser than promised (a status that is any string, settings of unknown
// type, a path nobody documented). The same client then runs against the live service.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { createUser } from '../helpers.js';
import { startServer, type RunningServer } from '../support/browser.js';
import { writeServedDocument } from '../support/prism.js';
import { insertPost } from './support.js';

const ROOT = new URL('../../', import.meta.url).pathname;
// The packages' own command-line entries (node_modules/.bin/openapi-typescript and tsc), run with this Node.
const OPENAPI_TYPESCRIPT = join(ROOT, 'node_modules', 'openapi-typescript', 'bin', 'cli.js');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

const CLIENT = `import createClient from 'openapi-fetch';
import type { components, paths } from './api.js';

export type PostStatus = components['schemas']['PostItem']['status'];

/** Signs in for a token, then reads the user, a page of posts, one post and the settings. */
export async function run(baseUrl: string, email: string, password: string) {
  const guest = createClient<paths>({ baseUrl, headers: { accept: 'application/json' } });

  const refused = await guest.POST('/api/tokens', { body: { email, password: 'not the password', device_name: 'typed client' } });
  const wrongPassword: string = refused.error?.message ?? '';

  const issued = await guest.POST('/api/tokens', { body: { email, password, device_name: 'typed client' } });
  if (issued.data === undefined) throw new Error(\`no token: \${issued.response.status}\`);
  const token: string = issued.data.token;
  const api = createClient<paths>({ baseUrl, headers: { accept: 'application/json', authorization: \`Bearer \${token}\` } });

  const me = await api.GET('/api/user');
  if (me.data === undefined) throw new Error(\`no user: \${me.response.status}\`);
  const userEmail: string = me.data.email;

  const page = await guest.GET('/api/posts', { params: { query: { locale: 'en', status: 'published', page: 1, per_page: 2 } } });
  if (page.data === undefined) throw new Error(\`no posts: \${page.response.status}\`);
  const first = page.data.data[0];
  if (first === undefined) throw new Error('an empty page');
  const statuses: PostStatus[] = page.data.data.map((post) => post.status);

  const post = await guest.GET('/api/posts/{slug}', { params: { path: { slug: first.slug }, query: { locale: 'en' } } });
  if (post.data === undefined) throw new Error(\`no post: \${post.response.status}\`);
  const body: string = post.data.data.body;

  const missing = await guest.GET('/api/posts/{slug}', { params: { path: { slug: 'no-such-post' } } });

  const settings = await guest.GET('/api/settings');
  if (settings.data === undefined) throw new Error(\`no settings: \${settings.response.status}\`);
  const postsPerPage: number = settings.data.data.posts_per_page;
  const locales: string[] = settings.data.data.locales;

  // The document's types are as tight as it promises: each line below must NOT compile.
  // @ts-expect-error a post's status is one of its three values, not any string
  const made: PostStatus = 'deleted';
  // @ts-expect-error posts_per_page is a number, never text
  const perPageText: string = settings.data.data.posts_per_page;
  // @ts-expect-error a path the document does not list
  await guest.GET('/api/nothing-here');
  // @ts-expect-error per_page is a number
  await guest.GET('/api/posts', { params: { query: { per_page: 'all' } } });
  void made;
  void perPageText;
  void body;

  return {
    email: userEmail,
    titles: page.data.data.map((item) => item.title),
    statuses,
    currentPage: page.data.meta.current_page,
    lastPage: page.data.meta.last_page,
    next: page.data.links.next,
    postTitle: post.data.data.title,
    postsPerPage,
    locales,
    missing: missing.error?.message ?? '',
    wrongPassword,
  };
}
`;

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    noEmit: true,
    noUncheckedIndexedAccess: true,
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2022', 'DOM'],
    types: [],
    skipLibCheck: true,
  },
  files: ['client.ts'],
};

type Outcome = {
  email: string;
  titles: string[];
  statuses: string[];
  currentPage: number;
  lastPage: number;
  next: string | null;
  postTitle: string;
  postsPerPage: number;
  locales: string[];
  missing: string;
  wrongPassword: string;
};

describe('a client generated with openapi-typescript and used through openapi-fetch', () => {
  let server: RunningServer;
  let dir: string;
  let remove = () => undefined as void;
  let user: Awaited<ReturnType<typeof createUser>>;

  before(async () => {
    server = await startServer();
    user = await createUser(server.app);
    for (const title of ['First typed', 'Second typed', 'Third typed']) await insertPost(server.app.db, { title, locale: 'en' });
    const served = await writeServedDocument(server.url);
    remove = served.remove;
    dir = join(served.file, '..', 'client');
    mkdirSync(dir);
    const generated = spawnSync(process.execPath, [OPENAPI_TYPESCRIPT, served.file, '-o', join(dir, 'api.ts')], { encoding: 'utf8' });
    assert.equal(generated.status, 0, `openapi-typescript: ${generated.stdout}${generated.stderr}`);
    writeFileSync(join(dir, 'client.ts'), CLIENT);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    // openapi-fetch (and its types) resolved from the project's own node_modules.
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  });

  after(async () => {
    remove();
    await server?.close();
  });

  it('compiles with tsc --strict', () => {
    const compiled = spawnSync(process.execPath, [TSC, '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8' });
    assert.equal(compiled.status, 0, `tsc --strict:\n${compiled.stdout}${compiled.stderr}`);
  });

  it('gets from the live service what its types say', async () => {
    const client = (await import(pathToFileURL(join(dir, 'client.ts')).href)) as { run(baseUrl: string, email: string, password: string): Promise<Outcome> };
    const outcome = await client.run(server.url, user.email, user.plainPassword);
    assert.equal(outcome.email, user.email);
    assert.equal(outcome.titles.length, 2);
    assert.deepEqual(outcome.statuses, ['published', 'published']);
    assert.equal(outcome.currentPage, 1);
    assert.equal(outcome.lastPage, 2);
    assert.match(outcome.next ?? '', /page=2/);
    assert.equal(outcome.postTitle, outcome.titles[0]);
    assert.equal(typeof outcome.postsPerPage, 'number');
    assert.ok(outcome.locales.includes('en'));
    assert.equal(outcome.missing, 'Not Found.');
    assert.notEqual(outcome.wrongPassword, '');
  });
});
