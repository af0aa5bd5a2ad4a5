// After a password confirmation, sends the form post that asked for it (the page at
// /user/confirm-password/continue), so the action the person asked for happens without a
// second press. Without JavaScript the page shows the same form with its button.
(function () {
  'use strict';
  function send() {
    var form = document.querySelector('form[data-confirm-continue]');
    if (form && !form.dataset.sent) {
      form.dataset.sent = 'true';
      form.requestSubmit();
    }
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', send);
  else send();
})();
