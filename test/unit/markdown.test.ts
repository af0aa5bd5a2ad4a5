// Post bodies are rendered from markdown and sanitized: nothing that runs script survives.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderMarkdown } from '../../src/modules/posts/markdown.js';

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

  const attacks: Array<[string, string, RegExp]> = [
    ['a script element', '<script>alert(1)</script>', /<script|alert\(1\)/i],
    ['a script element inside inline HTML', 'hello <b><script>alert(1)</script></b>', /<script/i],
    ['an event handler attribute', '<img src="x.png" onerror="alert(1)">', /onerror/i],
    ['an event handler on any tag', '<p onclick="alert(1)">hi</p>', /onclick/i],
    ['a javascript: link in markdown', '[click](javascript:alert(1))', /javascript:/i],
    ['a javascript: link in HTML', '<a href="javascript:alert(1)">x</a>', /javascript:/i],
    ['an obfuscated javascript: link', '<a href="jav&#x09;ascript:alert(1)">x</a>', /javascript|ascript:/i],
    ['a data: URL image', '![x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)', /data:/i],
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
