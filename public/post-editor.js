// The post editor's live preview and its local time; optional: without it the Preview button
// asks the server, and the time field is still plain UTC.
//
// The preview renders the body as the server does (src/modules/posts/markdown.ts): the same
// markdown-it (/vendor/markdown-it.js, the installed package's browser build) with the server's
// options, then DOMPurify (/vendor/dompurify.js) keeping only the server's allowlist of tags,
// attributes and URL schemes. Both rule sets come from the page (data-rendering), written once on
// the server. The result goes into the public post's markup, styled by the site's app.css.
(function () {
  'use strict';

  // A post's date as the site shows it (src/modules/posts/post-date.ts): its Intl options, in UTC.
  function postDate(lang, style, date) {
    return new Intl.DateTimeFormat(lang, Object.assign({}, style, { timeZone: 'UTC' })).format(date);
  }

  // A datetime-local value read as UTC, as the server reads it (src/modules/posts/panel-time.ts); null when not a time.
  function panelTime(value) {
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)) return null;
    var date = new Date(value + 'Z');
    return isNaN(date.getTime()) ? null : date;
  }

  // DOMPurify configured with the server's allowlist.
  function purifier(rules) {
    var purify = window.DOMPurify;
    var attributes = [];
    Object.keys(rules.attributes).forEach(function (tag) {
      rules.attributes[tag].forEach(function (name) {
        if (attributes.indexOf(name) === -1) attributes.push(name);
      });
    });
    // DOMPurify's own form of a URL allowlist: one of the schemes, or none (a relative URL).
    var uri = new RegExp('^(?:(?:' + rules.schemes.join('|') + '):|[^a-z]|[a-z+.\\-]+(?:[^a-z+.\\-:]|$))', 'i');
    // The server allows each attribute on its own tags only, and no data: URL, which DOMPurify
    // would let an image have whatever the scheme list says.
    purify.addHook('uponSanitizeAttribute', function (node, data) {
      var allowed = rules.attributes[node.nodeName.toLowerCase()] || [];
      // A browser ignores control characters and spaces in a URL, so "da ta:" is data: too.
      // eslint-disable-next-line no-control-regex
      var url = data.attrValue.replace(/[\u0000-\u0020]/g, '');
      if (allowed.indexOf(data.attrName) === -1 || /^data:/i.test(url)) data.keepAttr = false;
    });
    var config = { ALLOWED_TAGS: rules.tags, ALLOWED_ATTR: attributes, ALLOWED_URI_REGEXP: uri, ALLOW_DATA_ATTR: false, ALLOW_ARIA_ATTR: false, RETURN_DOM_FRAGMENT: true };
    return function (html) {
      return purify.sanitize(html, config);
    };
  }

  function localTime(field, line) {
    var lang = document.documentElement.lang || undefined;
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
    function show() {
      var date = panelTime(field.value);
      line.hidden = date === null;
      if (date === null) return;
      var time = new Intl.DateTimeFormat(lang, { dateStyle: 'full', timeStyle: 'short' }).format(date);
      line.textContent = line.getAttribute('data-local-time').replace(':zone', zone).replace(':time', time);
    }
    field.addEventListener('input', show);
    show();
  }

  function livePreview(section) {
    if (typeof window.markdownit !== 'function' || !window.DOMPurify) return;
    var rules = JSON.parse(section.getAttribute('data-rendering'));
    var markdown = window.markdownit(rules.markdown);
    var sanitize = purifier(rules);
    var lang = document.documentElement.lang || undefined;
    var dateStyle = JSON.parse(section.getAttribute('data-date-style'));
    var fields = {
      title: document.getElementById('field-title'),
      body: document.getElementById('field-body'),
      locale: document.getElementById('field-locale'),
      author: document.getElementById('field-author_id'),
      time: document.getElementById('field-published_at'),
    };
    var parts = {
      article: section.querySelector('[data-preview-article]'),
      meta: section.querySelector('[data-preview-meta]'),
      title: section.querySelector('[data-preview-title]'),
      body: section.querySelector('[data-preview-body]'),
    };
    if (!fields.body || !parts.body) return;

    function meta() {
      var items = [];
      var date = fields.time ? panelTime(fields.time.value) : null;
      if (date !== null) {
        var time = document.createElement('time');
        time.setAttribute('datetime', date.toISOString());
        time.textContent = postDate(lang, dateStyle, date);
        items.push(time);
      }
      var option = fields.author ? fields.author.options[fields.author.selectedIndex] : null;
      var name = option ? option.getAttribute('data-name') : '';
      if (name) {
        var author = document.createElement('span');
        author.className = 'post-author';
        author.textContent = section.getAttribute('data-byline').replace(':name', name);
        items.push(author);
      }
      parts.meta.replaceChildren.apply(parts.meta, items);
    }

    var pending = false;
    function render() {
      pending = false;
      if (fields.title) parts.title.textContent = fields.title.value;
      if (fields.locale) parts.article.lang = fields.locale.value;
      meta();
      var html = sanitize(markdown.render(fields.body.value));
      // As on the site (src/modules/posts/post-page.ts): a wide code block or table scrolls inside
      // itself, and takes the focus to be scrolled by keyboard.
      html.querySelectorAll('pre, table').forEach(function (block) {
        block.setAttribute('tabindex', '0');
      });
      parts.body.replaceChildren(html);
    }
    function soon() {
      if (pending) return;
      pending = true;
      window.requestAnimationFrame(render);
    }

    ['title', 'body', 'time'].forEach(function (name) {
      if (fields[name]) fields[name].addEventListener('input', soon);
    });
    ['locale', 'author'].forEach(function (name) {
      if (fields[name]) fields[name].addEventListener('change', soon);
    });
    // Live from now on: the preview shows at once, and the server's Preview button is not needed.
    section.hidden = false;
    var note = section.querySelector('[data-preview-note]');
    if (note) note.textContent = section.getAttribute('data-live-note');
    var button = document.querySelector('[data-server-preview]');
    if (button) button.hidden = true;
    section.setAttribute('data-live', '');
    render();
  }

  document.addEventListener('DOMContentLoaded', function () {
    var time = document.getElementById('field-published_at');
    var line = document.querySelector('[data-local-time]');
    if (time && line) localTime(time, line);
    var section = document.querySelector('[data-live-preview]');
    if (section) livePreview(section);
  });
})();
