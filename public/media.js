// The image upload form (src/views/admin/media/upload.eta), made to take a dropped file. Optional:
// without it the form still posts the chosen file and the library shows it.
// In the media library, a dropped file is put in the file input and the form is sent.
// In the post editor (data-insert-into names the body field), a chosen or dropped file — on the
// form or on the body itself — is sent with fetch, and the markdown the server answers with goes
// into the body at the cursor, so the post being written is never left.
(function () {
  'use strict';

  function hasFiles(event) {
    var types = event.dataTransfer && event.dataTransfer.types;
    return !!types && Array.prototype.indexOf.call(types, 'Files') !== -1;
  }

  function setup(form) {
    var input = form.querySelector('input[type=file]');
    var zone = form.querySelector('.drop-zone') || form;
    var status = form.querySelector('.media-upload-status');
    var target = form.dataset.insertInto ? document.getElementById(form.dataset.insertInto) : null;
    if (!input) return;

    function say(key, name) {
      if (status) status.textContent = (form.dataset[key] || '').replace(':name', name || '');
    }

    function insert(markdown) {
      var start = target.selectionStart;
      var end = target.selectionEnd;
      var before = target.value.slice(0, start);
      // The image on a line of its own.
      var text = (before === '' || /\n$/.test(before) ? '' : '\n') + markdown + '\n';
      target.setRangeText(text, start, end, 'end');
      target.dispatchEvent(new Event('input', { bubbles: true }));
      target.focus();
    }

    function upload(file) {
      var data = new FormData();
      data.append('_token', form.querySelector('input[name=_token]').value);
      data.append('file', file, file.name);
      say('msgUploading', file.name);
      fetch(form.action, { method: 'POST', body: data, headers: { accept: 'application/json' }, credentials: 'same-origin' })
        .then(function (response) {
          return response.json().then(function (body) {
            if (!response.ok) throw new Error((body && body.message) || '');
            insert(body.data.markdown);
            say('msgInserted', body.data.name);
            input.value = '';
          });
        })
        .catch(function (error) {
          if (status) status.textContent = error.message || form.dataset.msgFailed || '';
        });
    }

    function take(files) {
      if (!files || files.length === 0) return;
      if (target) {
        upload(files[0]);
      } else {
        input.files = files;
        form.requestSubmit();
      }
    }

    [zone].concat(target ? [target] : []).forEach(function (area) {
      area.addEventListener('dragover', function (event) {
        if (!hasFiles(event)) return;
        event.preventDefault();
        zone.classList.add('is-dragover');
      });
      area.addEventListener('dragleave', function () {
        zone.classList.remove('is-dragover');
      });
      area.addEventListener('drop', function (event) {
        if (!hasFiles(event)) return;
        event.preventDefault();
        zone.classList.remove('is-dragover');
        take(event.dataTransfer.files);
      });
    });

    if (target) {
      input.addEventListener('change', function () {
        take(input.files);
      });
      form.addEventListener('submit', function (event) {
        event.preventDefault();
        take(input.files);
      });
    }
  }

  document.addEventListener('DOMContentLoaded', function () {
    Array.prototype.forEach.call(document.querySelectorAll('form[data-media-upload]'), setup);
  });
})();
