// loopr web UI: live updates and lazily loaded transcripts. No framework, no inline script (the
// page's Content-Security-Policy allows only this file). It never puts text into the page as
// HTML: what it inserts is the server's own rendering (escaped there), parsed with DOMParser,
// which runs no script.
'use strict';
(function () {
  const meta = document.querySelector('meta[name="loopr-token"]');
  const token = meta ? meta.content : '';
  const withToken = (path, extra) =>
    path + '?token=' + encodeURIComponent(token) + (extra ? '&' + extra : '');

  async function fetchHtml(url) {
    const res = await fetch(url, { credentials: 'same-origin', cache: 'no-store' });
    if (!res.ok) throw new Error('HTTP ' + res.status);
    return new DOMParser().parseFromString(await res.text(), 'text/html');
  }

  // Live regions: `data-live="NAME"` is fetched again as `?part=NAME` when events arrive.
  const live = Array.from(document.querySelectorAll('[data-live]'));
  const since = document.body.dataset.since;
  const badge = document.getElementById('live');
  let timer = null;
  let refreshing = false;
  let again = false;

  async function refresh() {
    if (refreshing) {
      again = true;
      return;
    }
    refreshing = true;
    try {
      for (const el of Array.from(document.querySelectorAll('[data-live]'))) {
        const name = el.dataset.live;
        const doc = await fetchHtml(withToken(location.pathname, 'part=' + encodeURIComponent(name)));
        const fresh = doc.querySelector('[data-live="' + CSS.escape(name) + '"]');
        if (fresh) el.replaceWith(document.adoptNode(fresh));
      }
      document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed || 0) + 1);
    } catch (e) {
      if (badge) badge.className = 'live off';
    } finally {
      refreshing = false;
      if (again) {
        again = false;
        schedule();
      }
    }
  }

  function schedule() {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      refresh();
    }, 200);
  }

  if (live.length && since !== undefined && window.EventSource) {
    const events = new EventSource(withToken('/events', 'since=' + encodeURIComponent(since)));
    events.onopen = () => {
      if (badge) badge.className = 'live on';
    };
    events.onerror = () => {
      if (badge) badge.className = 'live off';
    };
    events.onmessage = schedule;
  }

  // Iterations: a closed <details data-src> loads its transcript the first time it opens.
  document.addEventListener(
    'toggle',
    async (ev) => {
      const d = ev.target;
      if (!(d instanceof HTMLDetailsElement) || !d.open || !d.dataset.src || d.dataset.loaded)
        return;
      d.dataset.loaded = 'loading';
      const body = d.querySelector('.body');
      try {
        const doc = await fetchHtml(d.dataset.src);
        const parts = Array.from(doc.body.childNodes).map((n) => document.adoptNode(n));
        if (body) body.replaceChildren(...parts);
        d.dataset.loaded = 'yes';
      } catch (e) {
        if (body) body.textContent = 'could not load the transcript: ' + e.message;
        delete d.dataset.loaded;
      }
    },
    true
  );
  // Comments on diff lines: a click on a line of a diff that takes comments opens a form under
  // it (built from elements: nothing from the page becomes HTML). The form posts to the page's
  // own `/loop/ID/comment`, which stores the comment with the loop.
  function hidden(name, value) {
    const input = document.createElement('input');
    input.type = 'hidden';
    input.name = name;
    input.value = value;
    return input;
  }

  document.addEventListener('click', (ev) => {
    const t = ev.target;
    if (!(t instanceof Element) || t.closest('a, form, button, textarea, input, summary')) return;
    const row = t.closest('div.diff[data-comment] tr.l');
    if (!row || String(window.getSelection() || '').length) return;
    const next = row.nextElementSibling;
    if (next && next.classList.contains('comment-form')) {
      next.remove();
      return;
    }
    const file = row.closest('details.dfile').dataset.file;
    const tr = document.createElement('tr');
    tr.className = 'comment-form';
    const td = document.createElement('td');
    td.colSpan = 3;
    const form = document.createElement('form');
    form.method = 'post';
    form.action = location.pathname.replace(/\/+$/, '') + '/comment';
    form.className = 'wide';
    form.append(hidden('token', token), hidden('back', 'loop'), hidden('file', file),
      hidden('side', row.dataset.side), hidden('line', row.dataset.line));
    const text = document.createElement('textarea');
    text.name = 'text';
    text.required = true;
    text.rows = 3;
    text.placeholder = 'comment on ' + file + ' line ' + row.dataset.line;
    text.setAttribute('aria-label', 'comment');
    const add = document.createElement('button');
    add.type = 'submit';
    add.className = 'add-comment';
    add.textContent = 'Add comment';
    const cancel = document.createElement('button');
    cancel.type = 'button';
    cancel.className = 'cancel';
    cancel.textContent = 'Cancel';
    cancel.addEventListener('click', () => tr.remove());
    form.append(text, add, cancel);
    td.append(form);
    tr.append(td);
    row.after(tr);
    text.focus();
  });
})();
