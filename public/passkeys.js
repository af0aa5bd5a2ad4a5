// Passkeys (WebAuthn) in the browser, with @simplewebauthn/browser (served by the service at
// /vendor/simplewebauthn-browser.js): adding one on the security page, signing in with one on the
// site's and the panel's login pages, confirming the password with one. Every form stays hidden
// until this script knows the browser can do WebAuthn; without JavaScript the page says so.
(function () {
  'use strict';
  if (window.tesseraPasskeys) return;
  window.tesseraPasskeys = true;

  function ready(run) {
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', run);
    else run();
  }

  // One JSON exchange with the service, CSRF token in the header as the web guard expects.
  async function post(url, form, body) {
    var token = form.querySelector('input[name="_token"]');
    var response = await fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': token ? token.value : '' },
      body: JSON.stringify(body || {}),
    });
    var data;
    try {
      data = await response.json();
    } catch {
      data = {};
    }
    return { status: response.status, data: data };
  }

  function firstError(data) {
    var errors = (data && data.errors) || {};
    for (var key in errors) {
      if (Object.prototype.hasOwnProperty.call(errors, key) && errors[key] && errors[key][0]) return errors[key][0];
    }
    return (data && data.message) || null;
  }

  function say(form, message) {
    var box = form.querySelector('[data-passkey-message]');
    if (box) box.textContent = message || '';
  }

  // The browser's refusal (the user closed the dialog, or no passkey matched) is not an error of the page.
  function ceremonyFailure(form, error) {
    var cancelled = error && (error.name === 'NotAllowedError' || error.name === 'AbortError' || error.code === 'ERROR_CEREMONY_ABORTED');
    say(form, cancelled ? form.dataset.errorCancelled : form.dataset.errorFailed);
  }

  // A passkey being added when the password confirmation was stale: its name waits in this tab
  // while the password is confirmed, and the addition goes on when the page comes back.
  var PENDING = 'tessera.passkeyPending';
  var PENDING_MS = 10 * 60 * 1000;
  var CONFIRM_PATH = '/user/confirm-password';

  function confirmFirst(form, name) {
    try {
      window.sessionStorage.setItem(PENDING, JSON.stringify({ name: name, at: Date.now() }));
    } catch {
      // No storage (a private mode): after the confirmation, the person presses Add again.
    }
    window.location.assign(form.dataset.confirm);
  }

  // Only on the way back from the confirmation: a later visit of the page starts no ceremony.
  function fromConfirmation() {
    try {
      return new URL(document.referrer).pathname.indexOf(CONFIRM_PATH) === 0;
    } catch {
      return false;
    }
  }

  function takePending() {
    var pending;
    try {
      pending = JSON.parse(window.sessionStorage.getItem(PENDING) || 'null');
      window.sessionStorage.removeItem(PENDING);
    } catch {
      return null;
    }
    var fresh = pending && typeof pending.name === 'string' && Date.now() - pending.at < PENDING_MS;
    return fresh && fromConfirmation() ? pending.name : null;
  }

  async function register(form, lib) {
    var nameInput = form.querySelector('input[name="passkey_name"]');
    var name = nameInput ? nameInput.value : '';
    var first = await post(form.dataset.options, form, { name: name });
    // The password confirmation is stale: confirm it, then come back here and go on.
    if (first.status === 423) return confirmFirst(form, name);
    if (first.status !== 200) {
      if (nameInput && first.data && first.data.errors && first.data.errors.name) {
        nameInput.setAttribute('aria-invalid', 'true');
        nameInput.focus();
      }
      return say(form, firstError(first.data) || form.dataset.errorFailed);
    }
    if (nameInput) nameInput.removeAttribute('aria-invalid');
    var attestation;
    try {
      attestation = await lib.startRegistration({ optionsJSON: first.data.options });
    } catch (error) {
      return ceremonyFailure(form, error);
    }
    var second = await post(form.dataset.verify, form, { response: attestation });
    if (second.status === 423) return confirmFirst(form, name);
    if (second.status !== 201) return say(form, firstError(second.data) || form.dataset.errorFailed);
    window.location.assign(second.data.redirect || window.location.href);
  }

  async function authenticate(form, lib) {
    var first = await post(form.dataset.options, form, {});
    if (first.status !== 200) return say(form, firstError(first.data) || form.dataset.errorFailed);
    var assertion;
    try {
      assertion = await lib.startAuthentication({ optionsJSON: first.data.options });
    } catch (error) {
      return ceremonyFailure(form, error);
    }
    var second = await post(form.dataset.verify, form, { response: assertion });
    if (second.status !== 200) return say(form, firstError(second.data) || form.dataset.errorFailed);
    window.location.assign(second.data.redirect || '/');
  }

  function wire(form, lib, action) {
    form.hidden = false;
    var busy = false;
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      if (busy) return;
      busy = true;
      say(form, '');
      var button = form.querySelector('button[type="submit"]');
      if (button) button.setAttribute('aria-busy', 'true');
      action(form, lib)
        .catch(function () {
          say(form, form.dataset.errorFailed);
        })
        .finally(function () {
          busy = false;
          if (button) button.removeAttribute('aria-busy');
        });
    });
  }

  ready(function () {
    var lib = window.SimpleWebAuthnBrowser;
    var supported = !!lib && lib.browserSupportsWebAuthn();
    var forms = document.querySelectorAll('form[data-passkey-register], form[data-passkey-auth]');
    if (!supported) {
      if (forms.length > 0) document.querySelectorAll('[data-passkey-unsupported]').forEach(function (note) { note.hidden = false; });
      return;
    }
    document.querySelectorAll('form[data-passkey-register]').forEach(function (form) {
      wire(form, lib, register);
      var pending = takePending();
      var nameInput = form.querySelector('input[name="passkey_name"]');
      if (pending !== null && nameInput) {
        nameInput.value = pending;
        form.scrollIntoView({ block: 'center' });
        form.requestSubmit();
      }
    });
    document.querySelectorAll('form[data-passkey-auth]').forEach(function (form) { wire(form, lib, authenticate); });
  });
})();
