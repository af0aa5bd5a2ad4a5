// Post bodies are rendered from markdown and sanitized: nothing that runs script survives.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { describe, it } from 'node:test';
import { markdownCacheStats, renderMarkdown } from '../../src/modules/posts/markdown.js';

describe('renderMarkdown', () => {
  it('renders headings, emphasis, links, lists and code', () => {
    const html = renderMarkdown('# Title\n\n**bold** _it_ [link](https://example.com "t")\n\n- one\n\n```js\nlet a = 1;\n```');
    assert.match(html, /<h1>Title<\/h1>/);
    assert.match(html, /<strong>bold<\/strong>/);
    assert.match(html, /<em>it<\/em>/);
    assert.match(html, /<a href="https:\/\/example.com" title="t">link<\/a>/);
    assert.match(html, /<li>one<\/li>/);
    assert.match(html, /<code class="language-js">let a = 1;\n<\/code>/);
  });

  it("renders GitHub's tables, strikethrough and bare links", () => {
    const html = renderMarkdown('| a | b |\n|---|---|\n| 1 | 2 |\n\n~~gone~~ see https://example.com/x');
    assert.match(html, /<table>\s*<thead>\s*<tr>\s*<th>a<\/th>/);
    assert.match(html, /<td>2<\/td>/);
    assert.match(html, /<s>gone<\/s>/);
    assert.match(html, /<a href="https:\/\/example.com\/x">https:\/\/example.com\/x<\/a>/);
  });

  it('renders deeply nested quotes and lists (nesting is capped) instead of overflowing the stack', () => {
    for (const deep of ['> '.repeat(100_000) + 'x', `${'- '.repeat(50_000)}x`, '['.repeat(100_000)]) {
      const html = renderMarkdown(deep);
      assert.ok(html.length > 0);
      assert.ok((html.match(/<blockquote>/g) ?? []).length <= 100);
    }
  });

  // Inputs on which marked 16 took time quadratic in their length (13 s and 21 s for these 200 KB
  // bodies, the event loop blocked for every reader). They render in a worker thread, ended if it
  // is still busy after 20 s: a hang guard with a wide margin (they take ~0.5 s together here),
  // not a speed figure.
  it('renders 200 KB bodies of repeated emphasis and code marks without hanging', async () => {
    const worker = new Worker(
      // The worker loads the TypeScript source through tsx, as the test runner does.
      `import('tsx/esm/api').then(({ register }) => register()).then(() => import(${JSON.stringify(new URL('../../src/modules/posts/markdown.ts', import.meta.url).href)})).then(({ renderMarkdown }) => {
        const bodies = ['*a'.repeat(100000), '\`a'.repeat(100000), '_a'.repeat(100000), '**a*'.repeat(50000)];
        require('node:worker_threads').parentPort.postMessage(bodies.map((body) => renderMarkdown(body).slice(0, 3)));
      })`,
      { eval: true },
    );
    const guard = setTimeout(() => void worker.terminate(), 20_000);
    try {
      const result = await Promise.race([once(worker, 'message'), once(worker, 'exit').then(() => assert.fail('still rendering after 20 s'))]);
      assert.deepEqual(result, [['<p>', '<p>', '<p>', '<p>']]);
    } finally {
      clearTimeout(guard);
      await worker.terminate();
    }
  });

  const attacks: Array<[string, string, RegExp]> = [
    ['a script element', '<script>alert(1)</script>', /<script|alert\(1\)/i],
    ['a script element inside inline HTML', 'hello <b><script>alert(1)</script></b>', /<script/i],
    ['an event handler attribute', '<img src="x.png" onerror="alert(1)">', /onerror/i],
    ['an event handler on any tag', '<p onclick="alert(1)">hi</p>', /onclick/i],
    // A link markdown-it refuses stays as plain text: harmless, so only a link or source counts.
    ['a javascript: link in markdown', '[click](javascript:alert(1))', /(href|src)\s*=\s*["']?\s*javascript:/i],
    ['a javascript: link in HTML', '<a href="javascript:alert(1)">x</a>', /javascript:/i],
    ['an obfuscated javascript: link', '<a href="jav&#x09;ascript:alert(1)">x</a>', /javascript|ascript:/i],
    ['a data: URL image', '![x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)', /(href|src)\s*=\s*["']?\s*data:/i],
    ['an iframe', '<iframe src="https://evil.example"></iframe>', /<iframe/i],
    ['an svg with script', '<svg><script>alert(1)</script></svg>', /<svg|<script/i],
    ['a style attribute', '<p style="background:url(javascript:alert(1))">x</p>', /style=|javascript:/i],
    ['a form', '<form action="https://evil.example"><input name="a"></form>', /<form|<input/i],
  ];
  for (const [name, markdown, forbidden] of attacks) {
    it(`removes ${name}`, () => {
      assert.doesNotMatch(renderMarkdown(markdown), forbidden);
    });
  }
});

describe('the render cache', () => {
  it('renders a body once and answers the same HTML from the cache after', () => {
    const body = `# Cached ${Date.now()}\n\n**once**`;
    const before = markdownCacheStats();
    const first = renderMarkdown(body);
    const second = renderMarkdown(body);
    const after = markdownCacheStats();
    assert.equal(second, first);
    assert.equal(after.misses - before.misses, 1);
    assert.equal(after.hits - before.hits, 1);
    // An edited body is another key: the old HTML is never answered for it.
    assert.match(renderMarkdown(`${body} and more`), /and more/);
  });

  it('stays within its count and size, keeping the most recently used', () => {
    const { maxEntries, maxChars } = markdownCacheStats();
    const kept = `kept ${Date.now()}`;
    renderMarkdown(kept);
    const start = markdownCacheStats();
    for (let i = 0; i < maxEntries + 50; i += 1) {
      renderMarkdown(`entry ${Date.now()} ${i}`);
      if (i % 10 === 0) renderMarkdown(kept);
    }
    const counted = markdownCacheStats();
    assert.ok(counted.entries <= maxEntries, `${counted.entries} entries`);
    // Used every 10 renders, `kept` is never the least recently used: each use was a hit.
    assert.equal(counted.misses - start.misses, maxEntries + 50, 'only the new bodies were rendered');
    const large = 'y'.repeat(Math.floor(maxChars / 20));
    for (let i = 0; i < 30; i += 1) renderMarkdown(`${i} ${large}`);
    const stats = markdownCacheStats();
    assert.ok(stats.entries <= maxEntries, `${stats.entries} entries`);
    assert.ok(stats.chars <= maxChars, `${stats.chars} chars`);
    const hits = stats.hits;
    renderMarkdown('29 ' + large);
    assert.equal(markdownCacheStats().hits, hits + 1, 'the newest entry is still held');
  });

  it('does not keep a body larger than an eighth of its size', () => {
    const { maxChars } = markdownCacheStats();
    const huge = `z${Date.now()} `.padEnd(Math.floor(maxChars / 8) + 1, 'z');
    renderMarkdown(huge);
    const { misses } = markdownCacheStats();
    renderMarkdown(huge);
    assert.equal(markdownCacheStats().misses, misses + 1);
  });
});
