// The explorer works without this script; it adds copy-to-clipboard buttons
// and loads a transaction's raw hex on demand.
(function () {
  'use strict';

  function fallbackCopy(text) {
    var area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'sr-only';
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok ? Promise.resolve() : Promise.reject(new Error('copy failed'));
  }

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () { return fallbackCopy(text); });
    }
    return fallbackCopy(text);
  }

  document.querySelectorAll('button.copy').forEach(function (btn) {
    btn.hidden = false;
    btn.addEventListener('click', function () {
      copy(btn.getAttribute('data-copy')).then(function () {
        btn.classList.add('done');
        btn.title = 'Copied';
        setTimeout(function () { btn.classList.remove('done'); btn.title = 'Copy to clipboard'; }, 1500);
      }, function () { btn.title = 'Copy failed'; });
    });
  });

  var toggle = document.getElementById('rawhex-toggle');
  var pre = document.getElementById('rawhex');
  if (toggle && pre) {
    toggle.addEventListener('click', function (ev) {
      ev.preventDefault();
      if (!pre.hidden) {
        pre.hidden = true;
        toggle.textContent = 'Show raw hex';
        return;
      }
      if (pre.textContent) {
        pre.hidden = false;
        toggle.textContent = 'Hide raw hex';
        return;
      }
      toggle.textContent = 'Loading…';
      fetch('/api/v2/rawtx/' + encodeURIComponent(toggle.getAttribute('data-txid')))
        .then(function (r) { return r.json().then(function (body) { return { ok: r.ok, body: body }; }); })
        .then(function (res) {
          if (!res.ok || typeof res.body !== 'string') {
            throw new Error(res.body && res.body.error ? res.body.error : 'cannot load the raw transaction');
          }
          pre.textContent = res.body;
          pre.hidden = false;
          toggle.textContent = 'Hide raw hex';
        })
        .catch(function (err) {
          toggle.textContent = 'Show raw hex (' + err.message + ')';
        });
    });
  }
})();
