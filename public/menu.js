// The header's menu button on a narrow screen. Loaded in <head>, not deferred: it marks the page
// (js-menu) before the header is drawn, and app.css folds the menu under 40rem only on a marked
// page, so without this script every link stays in the header. No inline script: the CSP.
(function () {
  'use strict';
  var root = document.documentElement;
  root.classList.add('js-menu');
  document.addEventListener('DOMContentLoaded', function () {
    var button = document.querySelector('.menu-toggle');
    if (!button) return;
    function setOpen(open) {
      button.setAttribute('aria-expanded', open ? 'true' : 'false');
      root.classList.toggle('menu-open', open);
    }
    button.addEventListener('click', function () {
      setOpen(button.getAttribute('aria-expanded') !== 'true');
    });
    // Escape closes an open menu and gives the focus back to its button, as a disclosure does.
    document.addEventListener('keydown', function (event) {
      if (event.key !== 'Escape' || button.getAttribute('aria-expanded') !== 'true') return;
      setOpen(false);
      button.focus();
    });
  });
})();
