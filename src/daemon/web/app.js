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
})();
