// Browser libraries served by the service itself (no CDN: the CSP allows scripts from 'self'
// only), each the build its package ships for browsers, read once at start. The post editor's
// live preview uses the server's own markdown renderer, markdown-it (the same installed
// version, so the same rules), and DOMPurify to sanitise what it renders.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

const LIBRARIES = [
  { path: '/vendor/markdown-it.js', file: new URL('./browser/markdown-it.umd.min.js', import.meta.resolve('markdown-it')) },
  { path: '/vendor/dompurify.js', file: new URL('./purify.min.js', import.meta.resolve('dompurify')) },
];

export async function vendorRoutes(app: FastifyInstance): Promise<void> {
  const cacheControl = app.config.env !== 'development' ? 'public, max-age=3600' : 'no-cache';
  for (const library of LIBRARIES) {
    const script = readFileSync(library.file);
    app.get(library.path, { config: { auth: 'public' } }, async (_request, reply) =>
      reply.type('text/javascript; charset=utf-8').header('cache-control', cacheControl).send(script),
    );
  }
}
