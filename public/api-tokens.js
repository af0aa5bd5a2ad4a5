// The copy button of a new API token, and an optional one: without this script the token sits
// in a readonly field the user selects and copies by hand (the button stays hidden).
(function () {
  'use strict';
  document.addEventListener('DOMContentLoaded', function () {
    var input = document.getElementById('new-token');
    var button = document.getElementById('copy-token');
    var status = document.getElementById('copy-token-status');
    if (!input || !button || !status) return;

    function say(message) {
      status.textContent = message;
    }
    // The older API, for a page not served over a secure origin (no navigator.clipboard there).
    function copyBySelection() {
      input.focus();
      input.select();
      var copied;
      try {
        copied = document.execCommand('copy');
      } catch {
        copied = false;
      }
      say(copied ? button.dataset.copied : button.dataset.failed);
    }

    // One click selects the whole token, so a manual copy takes the token and nothing else.
    input.addEventListener('focus', function () {
      input.select();
    });
    button.hidden = false;
    button.addEventListener('click', function () {
      input.select();
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(input.value).then(function () {
          say(button.dataset.copied);
        }, copyBySelection);
      } else {
        copyBySelection();
      }
    });
  });
})();
