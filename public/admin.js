// The panel's only script, and an optional one: every form works without it.
// While the slug field is empty, its placeholder shows the slug the title will give
// (the same rule as src/modules/posts/slug.ts), so the editor sees what will be saved.
(function () {
  'use strict';
  function slugify(title) {
    return title
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 200)
      .replace(/-+$/, '');
  }
  document.addEventListener('DOMContentLoaded', function () {
    var title = document.getElementById('field-title');
    var slug = document.getElementById('field-slug');
    if (!title || !slug) return;
    title.addEventListener('input', function () {
      slug.placeholder = slugify(title.value);
    });
  });
})();
