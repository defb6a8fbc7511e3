// kvsweep serve: the few updates a page makes by itself; no library, nothing from elsewhere.
// - #running[data-refresh]: fetches the server-rendered running section once a second.
// - #live[data-stream]: follows /api/live/stream (server-sent events) and puts each event's
//   figures, charts (SVG drawn by the server) and source states in place.
'use strict';

(function () {
  const number = (v) => (v === null || v === undefined ? 'n/a' : (Number.isInteger(v) ? String(v) : v.toFixed(2)));

  function refreshRunning(region) {
    const url = region.dataset.refresh;
    let busy = false;
    setInterval(async () => {
      if (busy) return;
      busy = true;
      try {
        const reply = await fetch(url, {credentials: 'same-origin', cache: 'no-store'});
        if (reply.ok) {
          region.innerHTML = await reply.text();  // rendered and escaped by the server
          region.dataset.updated = String(Date.now());
        }
      } catch (e) {
        // The server restarting is not an error of the page: the next tick tries again.
      } finally {
        busy = false;
      }
    }, 1000);
  }

  function field(view, path) {
    return path.split('.').reduce((v, key) => (v === null || v === undefined ? v : v[key]), view);
  }

  function sourceRow(source) {
    const row = document.createElement('tr');
    const cell = (text, cls) => {
      const td = document.createElement('td');
      if (cls) td.className = cls;
      td.textContent = text;
      row.appendChild(td);
      return td;
    };
    cell(source.url, 'text');
    const state = cell('', 'text');
    const badge = document.createElement('span');
    badge.className = 'badge ' + (source.stale ? 'stale' : 'done');
    badge.textContent = source.stale ? 'stale' : 'fresh';
    state.appendChild(badge);
    if (source.stale && source.error) state.appendChild(document.createTextNode(' ' + source.error));
    cell(source.ttft_metric, 'text');
    cell(source.last_ok_s_ago === null ? 'never' : number(source.last_ok_s_ago));
    return row;
  }

  function followLive(region) {
    const url = region.dataset.stream + (region.dataset.stream.includes('?') ? '&' : '?') + 'charts=svg';
    const events = new EventSource(url);
    events.addEventListener('live', (message) => {
      const view = JSON.parse(message.data);
      for (const el of region.querySelectorAll('[data-field]')) {
        el.textContent = number(field(view, el.dataset.field));
      }
      for (const el of region.querySelectorAll('[data-svg]')) {
        const svg = view[el.dataset.svg];
        if (svg) el.innerHTML = svg;  // drawn by the server's chart code, every string escaped
      }
      const body = region.querySelector('[data-sources]');
      if (body) body.replaceChildren(...view.sources.map(sourceRow));
      const updated = region.querySelector('[data-updated]');
      if (updated) {
        updated.textContent = 'Updated ' + new Date().toLocaleTimeString() + ' · ' +
            view.fresh_sources + ' of ' + view.sources.length + ' sources fresh · ' +
            view.points.length + ' points. A stale source is left out of the figures, never counted as zero.';
      }
      region.dataset.events = String(Number(region.dataset.events || 0) + 1);
    });
    // EventSource reconnects by itself after an error; nothing else to do.
  }

  document.addEventListener('DOMContentLoaded', () => {
    const running = document.getElementById('running');
    if (running && running.dataset.refresh) refreshRunning(running);
    const live = document.getElementById('live');
    if (live && live.dataset.stream) followLive(live);
  });
})();
