// The mediamock dashboard: reads and acts through the control API under
// /_mock, follows /_mock/events, and draws with the DOM (text is always
// set as text, never parsed as HTML). No framework, no build step.
'use strict';
(() => {
  const $ = (sel, root = document) => root.querySelector(sel);
  const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];

  // h makes an element: h('td', {class: 'num'}, 'text', child, ...).
  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null || v === false) continue;
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else el.setAttribute(k, v === true ? '' : v);
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid != null && kid !== false) el.append(kid instanceof Node ? kid : String(kid));
    }
    return el;
  }

  // Icons for what has no picture: a few strokes of SVG.
  const ICONS = {
    video: 'M4 6h11v12H4zM15 10l5-3v10l-5-3',
    voice: 'M12 4v10M8 8v2a4 4 0 0 0 8 0V8M12 18v2',
    music: 'M9 18V6l10-2v12M9 18a2 2 0 1 1-4 0 2 2 0 0 1 4 0zM19 16a2 2 0 1 1-4 0 2 2 0 0 1 4 0z',
    model3d: 'M12 3l8 4.5v9L12 21l-8-4.5v-9zM12 12l8-4.5M12 12v9M12 12L4 7.5',
    image: 'M4 5h16v14H4zM4 16l5-5 4 4 3-3 4 4',
    waiting: 'M12 7v5l3 3M12 21a9 9 0 1 1 0-18 9 9 0 0 1 0 18z',
    failed: 'M6 6l12 12M18 6L6 18',
  };
  function icon(name) {
    const ns = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(ns, 'svg');
    svg.setAttribute('viewBox', '0 0 24 24');
    svg.setAttribute('aria-hidden', 'true');
    const p = document.createElementNS(ns, 'path');
    p.setAttribute('d', ICONS[name] || ICONS.image);
    svg.append(p);
    return svg;
  }

  // --- the control token: given once as ?token=, kept for this tab

  const TOKEN_KEY = 'mediamock.controlToken';
  {
    const u = new URL(location.href);
    const t = u.searchParams.get('token');
    if (t) {
      sessionStorage.setItem(TOKEN_KEY, t);
      u.searchParams.delete('token');
      history.replaceState(null, '', u.pathname + u.search + u.hash);
    }
  }
  const token = () => sessionStorage.getItem(TOKEN_KEY) || '';

  class Unauthorized extends Error {}

  // ApiError is an answer of the control API other than 2xx: its status and
  // its error object (code, details).
  class ApiError extends Error {
    constructor(status, message, error) {
      super(message);
      this.status = status;
      this.error = error || {};
    }
  }

  // api calls the control API; every state change is JSON.
  async function api(method, path, body) {
    const headers = {};
    if (token()) headers.Authorization = 'Bearer ' + token();
    const opts = { method, headers };
    if (method !== 'GET') {
      headers['Content-Type'] = 'application/json';
      if (body !== undefined) opts.body = JSON.stringify(body);
    }
    const res = await fetch('/_mock' + path, opts);
    const data = await res.json().catch(() => null);
    if (res.status === 401) throw new Unauthorized('The control token is missing or wrong.');
    if (!res.ok) {
      const e = data && data.error;
      throw new ApiError(res.status, (e && e.message) || res.status + ' ' + res.statusText, e);
    }
    return data;
  }

  let toastTimer = 0;
  function toast(msg, ok) {
    const t = $('#toast');
    t.textContent = msg;
    t.classList.toggle('ok', !!ok);
    t.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { t.hidden = true; }, 4000);
  }

  // failed says what went wrong. A scoped call that finds its sandbox gone
  // (deleted elsewhere: no event tells of it) reads the sandboxes again,
  // which leaves the scope for the whole server.
  function failed(err) {
    if (err instanceof Unauthorized) return askToken();
    toast(err.message);
    if (S.scope && err instanceof ApiError && err.status === 404 && (err.error.details || {}).resource === 'sandbox') listsChanged();
  }

  // act runs an action of the page and says what went wrong.
  function act(fn) {
    return async (ev) => {
      if (ev && ev.preventDefault && ev.type === 'submit') ev.preventDefault();
      try {
        await fn(ev);
      } catch (err) {
        failed(err);
      }
    };
  }

  function askToken() {
    const d = $('#token-dialog');
    if (!d.open) d.showModal();
  }
  $('#token-form').addEventListener('submit', () => {
    sessionStorage.setItem(TOKEN_KEY, $('#token-form').elements.token.value.trim());
    start();
  });

  // --- formatting

  // Times carry their date: after a jump of the clock a time alone is
  // ambiguous.
  const stamp = (iso) => (iso ? iso.slice(0, 10) + ' ' + iso.slice(11, 19) : '');
  const full = (iso) => (iso ? iso.slice(0, 10) + ' ' + iso.slice(11, 19) + ' UTC' : '—');
  function took(a, b) {
    if (!a || !b) return '';
    const s = (Date.parse(b) - Date.parse(a)) / 1000;
    return s < 90 ? s.toFixed(1) + ' s' : (s / 60).toFixed(1) + ' min';
  }
  // span renders whole seconds as 1d 2h 3m 4s, leaving out what is zero.
  function span(s) {
    const parts = [[86400, 'd'], [3600, 'h'], [60, 'm'], [1, 's']].map(([n, u]) => { const v = Math.floor(s / n); s %= n; return v ? v + u : ''; });
    return parts.filter(Boolean).join(' ') || '0s';
  }
  const final = (st) => st === 'completed' || st === 'failed';
  const status = (st, extra) => h('span', { class: 'status st-' + st }, st, extra || '');
  const time = (iso, cls) => h('td', { class: 'time' + (cls ? ' ' + cls : ''), title: iso || '' }, stamp(iso));

  // --- state

  const SCOPE_KEY = 'mediamock.scope';
  const S = {
    clock: null,
    wsList: [], // every workspace, for the selectors
    workspaces: [], // details
    sandboxes: [],
    scope: sessionStorage.getItem(SCOPE_KEY) || '', // a sandbox's id, or '' for the whole server
    jobs: new Map(), jobsLoaded: false, jobStatus: '',
    library: [], libraryNext: null,
    publications: new Map(), publicationsLoaded: false,
    journal: [], journalLoaded: false, journalClass: '', journalSelected: '',
    // journalPages are the pages back from the newest (each its before and
    // offset); journalHeld, journalRecorded and journalSize are the journal's.
    journalPages: [], journalHeld: 0, journalRecorded: 0, journalSize: 0,
    ledgerWs: 0, ledger: [], ledgerBalance: null,
    faults: null, operations: [],
  };

  // --- panels: each loads its data when shown and redraws from the state

  const panels = {
    workspaces: { load: loadWorkspaces, render: renderWorkspaces },
    sandboxes: { load: loadSandboxesPanel, render: renderSandboxes },
    jobs: { load: loadJobs, render: renderJobs },
    library: { load: loadLibrary, render: renderLibrary },
    publications: { load: loadPublications, render: renderPublications },
    clock: { load: async () => setClock(await api('GET', '/clock')), render: renderClock },
    journal: { load: loadJournal, render: renderJournal },
    ledger: { load: loadLedger, render: renderLedger },
    coverage: { load: loadCoverage, render: () => {} },
    faults: { load: loadFaults, render: renderFaults },
  };
  let current = '';

  async function show(name) {
    if (!panels[name]) name = 'jobs';
    current = name;
    for (const [n] of Object.entries(panels)) $('#panel-' + n).hidden = n !== name;
    for (const a of $$('.tabs a')) {
      if (a.getAttribute('href') === '#' + name) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    await reload(name);
  }

  // Until its first data, a panel says it is loading (its .loading line,
  // aria-busy): an empty table is never shown for one not read yet.
  for (const panel of $$('.panel')) {
    panel.querySelector('h2').after(h('p', { class: 'loading', role: 'status' }, `Loading ${panel.querySelector('h2').textContent.toLowerCase()}…`));
  }
  async function reload(name) {
    const panel = $('#panel-' + name);
    if (!panel.dataset.loaded) panel.setAttribute('aria-busy', 'true');
    try {
      await panels[name].load();
      panels[name].render();
      panel.dataset.loaded = 'true';
    } catch (err) {
      failed(err);
    } finally {
      panel.removeAttribute('aria-busy');
    }
  }

  // Redraw or reload a panel once per frame or per burst, and only when it
  // is the one shown (the others load when shown).
  const drawing = new Set();
  function redraw(name) {
    if (current !== name || drawing.has(name)) return;
    drawing.add(name);
    requestAnimationFrame(() => { drawing.delete(name); panels[name].render(); });
  }
  const reloading = new Map();
  function stale(name) {
    if (current !== name || reloading.has(name)) return;
    reloading.set(name, setTimeout(() => { reloading.delete(name); reload(name); }, 250));
  }

  // --- clock

  let realTicker = 0;
  function setClock(c) {
    S.clock = Object.assign({ fetchedAt: Date.now() }, c);
    clearInterval(realTicker);
    if (c.mode === 'real') realTicker = setInterval(drawClock, 1000);
    drawClock();
    if (current === 'clock') renderClock();
  }
  function clockNow() {
    const c = S.clock;
    if (!c) return '';
    if (c.mode !== 'real') return c.now;
    return new Date(Date.parse(c.now) + Date.now() - c.fetchedAt).toISOString().replace('Z', '+00:00');
  }
  function drawClock() {
    $('#clock-now').textContent = full(clockNow());
    $('#clock-now').dataset.now = S.clock ? S.clock.now : '';
    $('#clock-mode').textContent = S.clock ? S.clock.mode : '';
    // Resync shows while a real clock is off the wall clock, saying by how much.
    const off = S.clock && S.clock.mode === 'real' ? S.clock.offset_seconds || 0 : 0;
    $('#clock-resync').hidden = off === 0;
    $('#clock-resync').textContent = off === 0 ? 'Resync' : `Resync (${off > 0 ? '+' : '−'}${span(Math.abs(off))})`;
    if (current === 'clock') $('#clock-now-big').textContent = full(clockNow());
  }
  function renderClock() {
    const c = S.clock;
    if (!c) return;
    $('#clock-now-big').textContent = full(clockNow());
    $('#clock-mode-big').textContent = c.mode;
    $('#clock-next').textContent = c.next_event_at ? full(c.next_event_at) : 'nothing is due';
    const f = $('#clock-set');
    if (document.activeElement !== f.elements.time) f.elements.time.value = clockNow().slice(0, 19);
    $('#clock-mode-form').elements.mode.value = c.mode;
  }
  // A real clock follows the wall clock: a jump leaves it ahead (across
  // restarts too) until a resync, so the dashboard asks first.
  function jumpConfirmed() {
    return !S.clock || S.clock.mode !== 'real' || confirm('The clock is real: it follows the wall clock. A jump keeps it ahead, across restarts too, until Resync puts it back on the wall clock (clients that compute times from their own clock see the difference). Jump?');
  }
  const advance = (d) => act(async () => {
    if (!jumpConfirmed()) return;
    setClock(await api('POST', '/clock/advance', { duration: d }));
  });
  $('#clock-resync').addEventListener('click', act(async () => setClock(await api('POST', '/clock/resync', {}))));
  for (const b of $$('[data-advance]')) b.addEventListener('click', advance(b.dataset.advance));
  const toNext = act(async () => {
    const c = await api('GET', '/clock');
    if (!c.next_event_at) return toast('Nothing is due.', true);
    if (!jumpConfirmed()) return;
    setClock(await api('POST', '/clock/set', { time: c.next_event_at }));
  });
  $('#advance-next').addEventListener('click', toNext);
  $('.to-next').addEventListener('click', toNext);
  $('#clock-set').addEventListener('submit', act(async (ev) => {
    let v = ev.target.elements.time.value;
    if (v.length === 16) v += ':00';
    if (!jumpConfirmed()) return;
    setClock(await api('POST', '/clock/set', { time: v + 'Z' }));
  }));
  $('#clock-mode-form').addEventListener('submit', act(async (ev) => {
    setClock(await api('PUT', '/clock/mode', { mode: ev.target.elements.mode.value }));
  }));

  // --- workspaces

  // loadWorkspaceList reads the workspaces for the selectors (one call);
  // loadWorkspaces their details too, for the cards.
  async function loadWorkspaceList() {
    S.wsList = await api('GET', '/workspaces');
    fillWorkspaceSelects();
  }
  async function loadWorkspaces() {
    await loadWorkspaceList();
    S.workspaces = await Promise.all(S.wsList.map((w) => api('GET', '/workspaces/' + w.id)));
  }
  // The selectors list the fixture's and added workspaces, then the
  // sandboxes', each marked as one.
  const wsOption = (w) => h('option', { value: w.id }, `${w.id} · ${w.name}${w.sandbox_id ? ' · sandbox' : ''}`);
  function fillWorkspaceSelects() {
    const plain = S.wsList.filter((w) => !w.sandbox_id);
    const boxes = S.wsList.filter((w) => w.sandbox_id);
    for (const sel of $$('.ws-select')) {
      const keep = sel.value;
      const all = sel.querySelector('option[value=""]');
      sel.replaceChildren(...(all ? [all] : []), ...plain.map(wsOption),
        ...(boxes.length ? [h('optgroup', { label: 'Sandboxes' }, boxes.map(wsOption))] : []));
      sel.value = keep;
      if (sel.value !== keep || !keep) sel.value = all ? '' : String(S.ledgerWs || (S.wsList[0] && S.wsList[0].id) || '');
    }
    $('#sandbox-from').replaceChildren(...plain.map((w) => h('option', { value: w.name })));
    if (plain[0]) $('#sandbox-create').elements.from.placeholder = plain[0].name;
    scopeFilters();
  }
  function copyButton(text) {
    return h('button', {
      type: 'button', class: 'small', 'aria-label': 'Copy token',
      onclick: act(async (ev) => {
        try {
          await navigator.clipboard.writeText(text);
          toast('Token copied.', true);
        } catch {
          // No clipboard (an insecure origin or a refused permission): show it to copy by hand.
          ev.target.closest('tr').querySelector('code').textContent = text;
          toast('Select the token to copy it.', true);
        }
      }),
    }, 'Copy');
  }
  function renderWorkspaces() {
    $('#workspace-cards').replaceChildren(...S.workspaces.map((w) => {
      const rw = w.rate_window;
      return h('article', { class: 'card' + (w.sandbox_id ? ' sandbox' : ''), dataset: { ws: w.id, sandbox: w.sandbox_id } },
        h('h3', {}, w.name, h('span', { class: 'id' }, '#' + w.id), h('span', { class: 'badge' }, w.plan),
          w.sandbox_id ? h('span', { class: 'badge sbx', title: 'A sandbox: ' + w.sandbox_id }, 'sandbox') : ''),
        h('dl', { class: 'facts' },
          w.sandbox_id ? [h('dt', {}, 'Sandbox'), h('dd', {}, h('code', {}, w.sandbox_id))] : '',
          h('dt', {}, 'Credits'), h('dd', { class: 'balance' }, w.credits_balance.toLocaleString('en')),
          h('dt', {}, 'Publishing'), h('dd', {}, w.publishing_allowed ? 'allowed' : 'not on this plan'),
          h('dt', {}, 'Monthly gifts'), h('dd', {}, w.monthly_gifts.length
            ? w.monthly_gifts.map((g) => `${g.model_id}: ${g.remaining}/${g.per_month}`).join(', ') + ` (renew ${g0(w).slice(0, 10)})`
            : 'none'),
          h('dt', {}, 'Rate window'), h('dd', {},
            h('meter', { min: 0, max: rw.limit, value: rw.used, high: rw.limit * 0.8, 'aria-label': 'Requests used this minute' }),
            ` ${rw.used}/${rw.limit} used, resets ${stamp(rw.resets_at)}`)),
        h('table', { class: 'tokens' }, h('tbody', {}, w.tokens.map((t) => h('tr', {},
          h('td', {}, h('code', {}, t.masked), h('div', { class: 'hint' }, t.name)),
          h('td', {}, t.type === 'oauth' ? 'OAuth' : 'API key'),
          h('td', {}, t.scopes.join(', ')),
          h('td', {}, copyButton(t.token)))))));
    }));
  }
  const g0 = (w) => (w.monthly_gifts[0] ? w.monthly_gifts[0].renews_at : '');

  // --- jobs

  // wsParam is the workspace a panel's selector shows, as a query parameter.
  const wsParam = (sel) => (sel.value ? '&workspace_id=' + encodeURIComponent(sel.value) : '');

  async function loadJobs() {
    if (!S.wsList.length) await loadWorkspaceList();
    const page = await api('GET', '/jobs?limit=200' + wsParam($('#job-ws')));
    S.jobs = new Map(page.data.map((j) => [j.job_id, j]));
    S.jobsLoaded = true;
  }
  function jobAction(j, action) {
    const path = j.kind === 'encore' ? `/encore/creations/${j.id}/${action}` : `/assets/${j.id}/${action}`;
    return h('button', {
      type: 'button', class: 'small' + (action === 'fail' ? ' danger' : ''), dataset: { action },
      'aria-label': `${action} job ${j.id}`,
      onclick: act(async () => { await api('POST', path, {}); }),
    }, action);
  }
  function renderJobs() {
    const kind = $('#job-kind').value;
    const ws = $('#job-ws').value;
    const all = [...S.jobs.values()].filter((j) => (!kind || j.kind === kind) && (!ws || String(j.workspace_id) === ws))
      .sort((a, b) => b.job_id - a.job_id);
    const counts = { '': all.length, queued: 0, processing: 0, completed: 0, failed: 0 };
    for (const j of all) counts[j.status]++;
    $('#job-status').replaceChildren(...Object.entries(counts).map(([st, n]) => h('button', {
      type: 'button', 'aria-pressed': String(S.jobStatus === st), dataset: { status: st },
      onclick: () => { S.jobStatus = st; renderJobs(); },
    }, st || 'all', h('span', { class: 'n' }, n))));
    const rows = all.filter((j) => !S.jobStatus || j.status === S.jobStatus);
    $('#job-table tbody').replaceChildren(...rows.map((j) => h('tr', { dataset: { job: j.job_id, id: j.id, status: j.status } },
      // Asset ids and Encore creation ids are separate sequences: one
      // column each.
      h('td', { class: 'num asset-ids' }, (j.asset_ids || []).join(', ') || (j.kind === 'encore' ? '' : j.id)),
      h('td', { class: 'num encore-id' }, j.kind === 'encore' ? j.id : ''),
      h('td', { class: 'wide' }, j.kind === 'encore' ? 'Encore' : j.asset_kind || 'generation'),
      h('td', { class: 'num wide' }, j.workspace_id),
      h('td', {}, j.model || j.effect || ''),
      h('td', { class: 'prompt wide', title: j.prompt || '' }, j.prompt || ''),
      h('td', {}, status(j.status), j.stuck && !final(j.status) ? [' ', h('span', { class: 'status st-stuck' }, 'stuck')] : '',
        j.error ? h('div', { class: 'hint', title: j.error.message }, j.error.code) : ''),
      // A queued job may hold a slot already (started_at), but it has not
      // started for the client: no start time until it processes.
      time(j.created_at, 'wide'), time(j.status === 'queued' ? '' : j.started_at, 'wide'), time(j.finished_at, 'wide'),
      h('td', { class: 'num wide' }, took(j.created_at, j.finished_at)),
      h('td', { class: 'actions' }, final(j.status) ? '' : [jobAction(j, 'complete'), ' ', j.stuck ? '' : [jobAction(j, 'stick'), ' '], jobAction(j, 'fail')]))));
    $('#jobs-empty').hidden = S.jobs.size > 0;
  }
  $('#job-kind').addEventListener('change', renderJobs);
  $('#job-ws').addEventListener('change', () => reload('jobs'));

  function onJob(ev) {
    if (S.jobsLoaded) {
      let j = S.jobs.get(ev.job_id);
      if (!j) {
        j = { id: ev.id, job_id: ev.job_id, kind: ev.kind, workspace_id: ev.workspace_id, model: ev.model, effect: ev.effect,
          asset_ids: ev.asset_ids, created_at: ev.at };
        S.jobs.set(ev.job_id, j);
        stale('jobs'); // for its prompt
      }
      if (ev.status === 'processing' && !j.started_at) j.started_at = ev.at;
      if (final(ev.status)) j.finished_at = ev.at;
      Object.assign(j, { status: ev.status, stuck: !!ev.stuck, error: ev.error });
      redraw('jobs');
    }
    stale('library');
  }

  // --- library

  function libraryQuery() {
    const q = new URLSearchParams();
    for (const [k, v] of new FormData($('#library-filter'))) if (v) q.set(k, v);
    const ws = $('#library-filter').elements.workspace_id.value; // a disabled select is not in the form data
    if (ws) q.set('workspace_id', ws);
    q.set('limit', '48');
    return q;
  }
  async function loadLibrary() {
    if (!S.wsList.length) await loadWorkspaceList();
    const page = await api('GET', '/assets?' + libraryQuery());
    S.library = page.data;
    S.libraryNext = page.next_cursor || null;
  }
  // Videos, audio and 3D models show a picture the dashboard draws (a
  // poster, a waveform, a view of the model): previews/ then the path of
  // the asset's file below /files/ (the API has no such pictures).
  const PREVIEW_NAMES = { video: 'Poster', voice: 'Waveform', music: 'Waveform', model3d: 'View' };
  function previewURL(fileURL) {
    if (!fileURL) return null;
    const m = /\/files\/(.+\.(mp4|wav|glb))$/.exec(new URL(fileURL, location.href).pathname);
    return m ? 'previews/' + m[1] : null;
  }
  // The page's own file requests stay out of the journal.
  const quiet = (u) => (u && !u.includes('?') ? u + '?via=dashboard' : u);
  function tile(a) {
    const thumb = h('div', { class: 'thumb' });
    const text = a.title || a.prompt || '';
    const preview = a.status === 'completed' && !a.thumbnail_url && previewURL(a.url);
    if (a.thumbnail_url) thumb.append(h('img', { src: quiet(a.thumbnail_url), alt: text || a.kind + ' ' + a.id, loading: 'lazy' }));
    else if (preview) thumb.append(h('img', { src: preview, alt: `${PREVIEW_NAMES[a.kind] || 'Preview'} of ${a.kind} ${a.id}`, loading: 'lazy', class: 'preview' }));
    else if (a.status === 'failed') thumb.append(icon('failed'));
    else if (a.status !== 'completed') thumb.append(icon('waiting'));
    else thumb.append(icon(a.kind));
    const cap = h('div', { class: 'cap' },
      h('div', {}, `#${a.id} `, status(a.status)),
      h('div', { class: 'sub' }, `${a.kind}${a.source === 'encore' ? ' · Encore' : ''} · ws ${a.workspace_id}`),
      h('div', { title: text }, text));
    return a.url
      ? h('a', { class: 'tile', href: quiet(a.url), target: '_blank', rel: 'noopener', dataset: { asset: a.id, kind: a.kind, status: a.status }, 'aria-label': `Open ${a.kind} ${a.id}` }, thumb, cap)
      : h('div', { class: 'tile', dataset: { asset: a.id, kind: a.kind, status: a.status } }, thumb, cap);
  }
  function renderLibrary() {
    $('#library-grid').replaceChildren(...S.library.map(tile));
    $('#library-more').hidden = !S.libraryNext;
    if (!S.library.length) $('#library-grid').append(h('p', { class: 'empty' }, 'Nothing matches.'));
  }
  $('#library-filter').addEventListener('submit', act(async () => { await reload('library'); }));
  $('#library-more').addEventListener('click', act(async () => {
    const q = libraryQuery();
    q.set('starting_after', S.libraryNext);
    const page = await api('GET', '/assets?' + q);
    S.library.push(...page.data);
    S.libraryNext = page.next_cursor || null;
    renderLibrary();
  }));

  // --- publications

  async function loadPublications() {
    if (!S.wsList.length) await loadWorkspaceList();
    const page = await api('GET', '/publications?limit=100' + wsParam($('#publication-ws')));
    S.publications = new Map(page.data.map((p) => [p.id, p]));
    S.publicationsLoaded = true;
  }
  $('#publication-ws').addEventListener('change', () => reload('publications'));
  function renderPublications() {
    const ws = $('#publication-ws').value;
    const all = [...S.publications.values()].filter((p) => !ws || String(p.workspace_id) === ws).sort((a, b) => b.id - a.id);
    $('#publication-table tbody').replaceChildren(...all.map((p) => h('tr', { dataset: { publication: p.id } },
      h('td', { class: 'num' }, p.id), h('td', { class: 'num wide' }, p.workspace_id), h('td', {}, status(p.status)),
      h('td', { class: 'prompt wide', title: p.caption }, p.caption),
      h('td', { class: 'wide' }, `${p.media_type} · ${p.asset_ids.length} asset${p.asset_ids.length === 1 ? '' : 's'}`),
      h('td', { class: 'time wide' }, p.published_at ? 'published ' + stamp(p.published_at) : p.scheduled_at ? 'for ' + full(p.scheduled_at) : stamp(p.created_at)),
      h('td', {}, h('ul', { class: 'deliveries' }, p.deliveries.map((d) => h('li', {},
        h('strong', {}, d.platform), ' ', d.handle, ' ', status(d.status), ' ',
        d.post_url ? h('a', { href: d.post_url, target: '_blank', rel: 'noopener noreferrer' }, d.post_url) : '',
        d.error ? h('span', { class: 'hint', title: d.error.message }, ' ' + d.error.code) : '')))))));
    $('#publications-empty').hidden = all.length > 0;
  }
  function onPublication(ev) {
    if (!S.publicationsLoaded) return;
    S.publications.set(ev.publication.id, Object.assign({ workspace_id: ev.workspace_id }, ev.publication));
    redraw('publications');
  }

  // --- journal

  // The journal is read a page at a time, newest first: a page back is the
  // entries numbered before the oldest of the page shown.
  const JOURNAL_PAGE = 100;
  const journalPage = () => S.journalPages[S.journalPages.length - 1] || { before: 0, offset: 0 };
  async function loadJournal() {
    const { before } = journalPage();
    const j = await api('GET', inScope(`/journal?limit=${JOURNAL_PAGE}${before ? '&before=' + before : ''}`));
    S.journal = j.entries;
    S.journalHeld = j.held;
    S.journalRecorded = j.recorded;
    S.journalSize = j.size;
    S.journalLoaded = true;
  }
  function forgetJournalPages() {
    S.journalPages = [];
  }
  const count = (n) => n.toLocaleString('en');
  function renderJournalCount() {
    const { offset } = journalPage();
    const shown = S.journal.length;
    let text = 'The journal holds no request yet.';
    if (S.journalHeld > 0 && shown > 0) {
      text = `Requests ${count(offset + 1)}–${count(offset + shown)} of the ${count(S.journalHeld)} the journal holds, newest first`;
      text += S.journalRecorded > S.journalHeld
        ? ` (${count(S.journalRecorded)} recorded: it keeps the last ${count(S.journalSize)}).`
        : '.';
    } else if (S.journalHeld > 0) {
      text = `No more requests: the journal holds ${count(S.journalHeld)}.`;
    }
    $('#journal-count').textContent = text;
    $('#journal-newer').disabled = S.journalPages.length === 0;
    $('#journal-older').disabled = offset + shown >= S.journalHeld || shown === 0;
  }
  $('#journal-older').addEventListener('click', act(async () => {
    const oldest = S.journal[S.journal.length - 1];
    if (!oldest) return;
    S.journalPages.push({ before: oldest.seq, offset: journalPage().offset + S.journal.length });
    await reload('journal');
  }));
  $('#journal-newer').addEventListener('click', act(async () => {
    S.journalPages.pop();
    await reload('journal');
  }));
  const classOf = (st) => Math.floor(st / 100);
  function renderJournal() {
    const classes = ['', '2', '3', '4', '5'];
    $('#journal-class').replaceChildren(...classes.map((c) => h('button', {
      type: 'button', 'aria-pressed': String(S.journalClass === c), dataset: { class: c },
      onclick: () => { S.journalClass = c; renderJournal(); },
    }, c ? c + 'xx' : 'all', h('span', { class: 'n' }, S.journal.filter((e) => !c || String(classOf(e.status)) === c).length))));
    const rows = S.journal.filter((e) => !S.journalClass || String(classOf(e.status)) === S.journalClass);
    $('#journal-table tbody').replaceChildren(...rows.map((e) => h('tr', {
      dataset: Object.assign({ request: e.id, seq: e.seq, status: e.status, op: e.operation || '' }, e.answer_cut ? { cut: 'true' } : {}),
      class: e.id === S.journalSelected ? 'selected' : null },
    h('td', {}, h('button', { type: 'button', onclick: act(() => selectRequest(e.id)), 'aria-label': 'Show request ' + e.id }, e.id.replace(/^req_0*/, '#'))),
    time(e.sim_time, 'wide'),
    h('td', { class: 'path', title: e.path + (e.query ? '?' + e.query : '') }, h('strong', {}, e.method), ' ', e.path + (e.query ? '?' + e.query : '')),
    h('td', { class: 'num c' + classOf(e.status) }, e.status, e.answer_cut ? cutMark(e) : ''),
    h('td', { class: 'num wide', title: e.sandbox_id ? 'Sandbox ' + e.sandbox_id : null }, e.workspace_id || '',
      e.sandbox_id ? [h('span', { class: 'sbx-mark', 'aria-hidden': 'true' }, '◆'), h('span', { class: 'sr' }, ' (a sandbox)')] : ''),
    h('td', { class: 'op wide' }, e.operation || ''),
    h('td', { class: 'num' }, e.duration_ms.toFixed(1)))));
    renderJournalCount();
  }
  // cutMark marks an answer a delivery fault cut: its status is what the
  // server sent, not what the client got.
  const cutMark = (e) => h('span', { class: 'cut', title: `A fault (${e.fault}) cut this answer on its way: the client never got it whole` }, 'cut');
  function pretty(body, type) {
    if (!body) return '(empty)';
    // eslint-disable-next-line no-control-regex
    if (/[\uFFFD\u0000-\u0008\u000E-\u001F]/.test(body)) return '(binary data)';
    if ((type || '').includes('json') || /^[[{]/.test(body)) {
      try { return JSON.stringify(JSON.parse(body), null, 2); } catch { /* cut off: show as it is */ }
    }
    return body;
  }
  async function selectRequest(id) {
    S.journalSelected = id;
    renderJournal();
    const j = await api('GET', inScope('/journal?id=' + encodeURIComponent(id)));
    const e = j.entries[0];
    if (!e) {
      $('#journal-detail').replaceChildren(h('p', { class: 'empty' }, 'That request left the journal.'));
      return;
    }
    $('#journal-detail').replaceChildren(
      h('h3', {}, `${e.method} ${e.path}${e.query ? '?' + e.query : ''}`),
      h('dl', { class: 'facts' },
        h('dt', {}, 'Status'), h('dd', { class: 'c' + classOf(e.status) }, e.status + (e.error_code ? ' ' + e.error_code : ''), e.answer_cut ? cutMark(e) : ''),
        e.answer_cut ? [h('dt', {}, 'Answer'), h('dd', { class: 'cut-note' },
          `Cut on its way by a fault (${e.fault}): the client never got it whole. The status and the body below are what the server wrote.`)] : '',
        h('dt', {}, 'Operation'), h('dd', {}, e.operation || '—'),
        h('dt', {}, 'Workspace'), h('dd', {}, e.workspace_id || '—'),
        e.sandbox_id ? [h('dt', {}, 'Sandbox'), h('dd', {}, h('code', {}, e.sandbox_id))] : '',
        h('dt', {}, 'Latency'), h('dd', {}, e.duration_ms.toFixed(2) + ' ms' + (e.injected_latency_ms ? ` (${e.injected_latency_ms} injected)` : '')),
        h('dt', {}, 'Sim time'), h('dd', {}, full(e.sim_time)),
        e.fault ? [h('dt', {}, 'Fault'), h('dd', {}, `${e.fault} (${e.fault_rule})`)] : '',
        e.evolved ? [h('dt', {}, 'Evolved'), h('dd', {}, h('ul', { class: 'evolved' }, e.evolved.map((x) => h('li', {}, h('code', {}, x)))))] : '',
        h('dt', {}, 'Request id'), h('dd', {}, h('code', {}, e.id)),
        e.traceparent ? [h('dt', {}, 'Trace'), h('dd', {}, h('code', {}, e.traceparent))] : ''),
      h('h3', {}, `Request body (${e.request_bytes} bytes${e.request_body_truncated ? ', the first ' + e.request_body.length + ' kept' : ''})`),
      h('pre', {}, pretty(e.request_body, e.request_content_type)),
      h('h3', {}, `Response body (${e.response_bytes} bytes${e.answer_cut ? ' written, cut on its way' : ''}${e.response_body_truncated ? ', the first ' + e.response_body.length + ' kept' : ''})`),
      h('pre', {}, pretty(e.response_body)));
  }
  function onJournal(ev) {
    if (S.journalLoaded && (!S.scope || ev.entry.sandbox_id === S.scope)) {
      S.journalRecorded++;
      S.journalHeld = Math.min(S.journalHeld + 1, S.journalSize || Infinity);
      if (!S.journalPages.length) { // the newest page shows it; an older one's offsets move
        S.journal.unshift(ev.entry);
        S.journal.length = Math.min(S.journal.length, JOURNAL_PAGE);
      } else {
        for (const p of S.journalPages) p.offset++;
      }
      redraw('journal');
    }
    stale('workspaces'); // its rate window moved
    stale('coverage');
    if (S.faults && S.faults.rules.length) stale('faults'); // the rules' counts
  }
  $('#journal-clear').addEventListener('click', act(async () => {
    await api('DELETE', inScope('/journal'));
    forgetJournalPages();
    await reload('journal');
  }));

  // --- ledger

  async function loadLedger() {
    if (!S.wsList.length) await loadWorkspaceList();
    S.ledgerWs = Number($('#ledger-ws').value) || (S.wsList[0] && S.wsList[0].id);
    const l = await api('GET', `/workspaces/${S.ledgerWs}/ledger`);
    S.ledger = l.entries;
    S.ledgerBalance = l.credits_balance;
  }
  function renderLedger() {
    $('#ledger-balance').textContent = S.ledgerBalance == null ? '…' : S.ledgerBalance.toLocaleString('en');
    const rows = S.ledger.slice().reverse();
    $('#ledger-table tbody').replaceChildren(...rows.map((e) => {
      const sign = e.type === 'charge' ? -1 : 1;
      return h('tr', { dataset: { entry: e.id, type: e.type, job: e.job_id || '' } },
        h('td', { class: 'num wide' }, e.id), time(e.at), h('td', {}, e.type),
        h('td', { class: 'num ' + (e.amount === 0 ? '' : sign > 0 ? 'amount-in' : 'amount-out') }, e.amount === 0 ? (e.covered ? `(${e.covered} covered)` : '0') : (sign > 0 ? '+' : '−') + e.amount),
        h('td', { class: 'num' }, e.balance_after), h('td', { class: 'num wide' }, e.job_id || ''), h('td', { class: 'wide' }, e.description));
    }));
  }
  $('#ledger-ws').addEventListener('change', () => reload('ledger'));
  function onLedger(ev) {
    if (ev.workspace_id === S.ledgerWs) {
      S.ledger.push(ev.entry);
      S.ledgerBalance = ev.entry.balance_after;
      redraw('ledger');
    }
    const w = S.workspaces.find((x) => x.id === ev.workspace_id);
    if (w) {
      w.credits_balance = ev.entry.balance_after;
      redraw('workspaces');
    }
    const sb = S.sandboxes.find((x) => x.workspace_id === ev.workspace_id);
    if (sb) {
      sb.credits_balance = ev.entry.balance_after;
      redraw('sandboxes');
    }
  }

  // --- coverage

  async function loadCoverage() {
    const cov = await api('GET', inScope('/coverage'));
    S.operations = cov.operations.map((o) => o.operation);
    const s = cov.summary;
    $('#coverage-summary').textContent = `Operations exercised ${s.operations_exercised}/${s.operations}, declared statuses ${s.statuses_exercised}/${s.statuses_declared}, lifecycle paths ${s.lifecycle_paths_taken}/${s.lifecycle_paths}.`;
    const statuses = [...new Set(cov.operations.flatMap((o) => o.statuses.map((x) => x.status)))].sort((a, b) => a - b);
    $('#coverage-table thead').replaceChildren(h('tr', {}, h('th', {}, 'Operation'), statuses.map((st) => h('th', { class: 'c' + classOf(st) }, st))));
    $('#coverage-table tbody').replaceChildren(...cov.operations.map((o) => h('tr', {},
      h('td', { title: o.method + ' ' + o.path }, h('code', {}, o.operation)),
      statuses.map((st) => {
        const x = o.statuses.find((y) => y.status === st);
        if (!x) return h('td', {}, h('span', { class: 'cell none' }, '·'));
        const cls = x.count === 0 ? 'untried' : x.declared ? 'hit' : 'extra';
        return h('td', {}, h('span', { class: 'cell ' + cls, title: `${o.operation} ${st}: ${x.count}${x.declared ? '' : ' (not declared)'}` }, x.count));
      }))));
    $('#lifecycle').replaceChildren(...Object.entries(cov.lifecycle).map(([path, n]) => h('li', { class: n ? null : 'untried' },
      h('code', {}, path), h('span', {}, n))));
  }
  $('#coverage-reset').addEventListener('click', act(async () => {
    await api('DELETE', inScope('/coverage'));
    await reload('coverage');
  }));

  // --- faults

  // The kinds of fault and their parameters are control.json's
  // (components.schemas.FaultSpec: x-fault-kinds and the properties'
  // schemas), read once: a kind the server gains is offered as it is.
  let faultDoc = null; // the promise of F
  let F = null; // the kinds (x-fault-kinds), the fields' schemas, the names of the parameters and of the targeting
  async function loadFaultDoc() {
    if (!faultDoc) {
      faultDoc = api('GET', '/openapi.json').then(readFaultDoc);
      faultDoc.catch(() => { faultDoc = null; }); // tried again on the next load
    }
    return faultDoc;
  }
  // readFaultDoc keeps the kinds, the schema of each field, and which
  // fields are parameters (a kind takes them) and which targeting (the
  // rest), in the document's order; then builds the forms from them.
  function readFaultDoc(doc) {
    const spec = doc.components.schemas.FaultSpec;
    const kinds = spec['x-fault-kinds'];
    const taken = new Set(Object.values(kinds).flatMap((k) => k.params));
    const fields = Object.keys(spec.properties).filter((p) => p !== 'kind');
    F = { kinds, props: spec.properties, params: fields.filter((p) => taken.has(p)), targets: fields.filter((p) => !taken.has(p)) };
    buildRuleForm();
    for (const sel of $$('select[data-enum]')) fillEnum(sel, F.props[sel.dataset.enum] || {});
    return F;
  }

  // fillEnum offers the values of a schema's enum (after "any", when the
  // select has one), its default chosen.
  function fillEnum(sel, schema) {
    const keep = sel.value;
    sel.replaceChildren(...$$('option[value=""]', sel), ...(schema.enum || []).map((v) => h('option', {}, String(v))));
    sel.value = keep;
    if (sel.selectedIndex < 0 || !keep) sel.value = schema.default != null ? String(schema.default) : sel.options[0] ? sel.options[0].value : '';
  }

  async function loadFaults() {
    await loadFaultDoc();
    if (!S.operations.length) S.operations = (await api('GET', '/coverage')).operations.map((o) => o.operation);
    for (const sel of $$('.op-select')) {
      if (sel.dataset.ops === String(S.operations.length)) continue; // filled: a reload keeps what is chosen
      const any = $$('option[value="*"], option[value=""]', sel);
      const keep = sel.value;
      sel.replaceChildren(...any, ...S.operations.map((op) => h('option', {}, op)));
      sel.dataset.ops = String(S.operations.length);
      sel.value = keep;
      if (sel.selectedIndex < 0) sel.selectedIndex = 0;
    }
    S.faults = await api('GET', inScope('/faults'));
  }
  // faultsCall changes the faults of the scope and shows them.
  async function faultsCall(method, path, body) {
    S.faults = await api(method, inScope(path), body);
    renderFaults();
  }
  const faultsAction = (method, path, body) => act(() => faultsCall(method, path, body));
  function renderFaults() {
    const f = S.faults;
    const items = [];
    const item = (text, remove) => h('li', {}, h('span', {}, text), remove || '');
    const removeBtn = (label, method, path, body) => h('button', { type: 'button', class: 'small', 'aria-label': label, onclick: faultsAction(method, path, body) }, 'Remove');
    for (const r of f.fail_next) {
      items.push(item(`Fail the next ${r.count} ${r.modality || 'job'}${r.count === 1 ? '' : 's'}${r.model ? ' of ' + r.model : ''} while ${r.stage || 'processing'} with ${r.code || 'provider_error'}`));
    }
    if (f.failure_rate != null) items.push(item(`Failure rate ${Math.round(f.failure_rate * 100)}% for every model`, removeBtn('Remove the failure rate', 'PUT', '/faults/failure-rate', { rate: null })));
    for (const p of f.fail_platforms) items.push(item(`Deliveries to ${p} fail`, removeBtn('Stop failing ' + p, 'DELETE', '/faults/platforms/' + encodeURIComponent(p))));
    for (const [op, ms] of Object.entries(f.latency_ms)) items.push(item(`${op}: ${ms} ms more`, removeBtn('Remove the latency of ' + op, 'DELETE', '/faults/latency/' + encodeURIComponent(op))));
    for (const r of f.forced_responses) items.push(item(`${r.operation === '*' ? 'Any operation' : r.operation} answers ${r.status}, ${r.remaining} more time${r.remaining === 1 ? '' : 's'}`));
    const sb = scoped();
    const any = items.length > 0 || f.rules.length > 0;
    $('#faults-active').replaceChildren(
      h('p', { id: 'faults-scope', class: 'scope-line', dataset: { scope: f.scope } }, 'Scope: ', h('strong', {}, f.scope),
        sb ? ` (${sb.name}): the faults set here reach its requests and jobs alone.` : ': every workspace meets these faults, the sandboxes included.'),
      f.global_faults ? h('p', { id: 'faults-global', class: 'note' }, 'Global faults are set too, and apply to this sandbox as well. ',
        wholeServer('Show the global faults')) : '',
      h('h3', {}, 'Active'),
      items.length ? h('ul', { class: 'active-list' }, items) : h('p', { class: 'empty' }, any ? 'No job or response fault; the rules are below.' : 'No fault is injected.'),
      any ? h('button', { type: 'button', class: 'danger', id: 'faults-clear', onclick: faultsAction('DELETE', '/faults') }, sb ? 'Clear every fault of this sandbox' : 'Clear every fault') : '');
    renderRules();
  }

  // --- fault rules: a kind, its parameters, whom it targets, how often

  // latency's distribution brings its own parameters: those of another
  // distribution are hidden.
  const DISTRIBUTIONS = { fixed: ['ms'], uniform: ['min_ms', 'max_ms'], lognormal: ['median_ms', 'sigma'] };

  const ruleForm = $('#fault-rule');

  // marked renders a text of the document: `code` as code, the rest as text.
  const marked = (text) => text.split('`').map((part, i) => (i % 2 ? h('code', {}, part) : part));
  const plain = (text) => (text || '').replaceAll('`', '');
  const upper = (text) => text.charAt(0).toUpperCase() + text.slice(1);

  // fieldInput makes the input of a field from its schema: a choice for an
  // enum or a boolean (the schema's default, when it has one, is the empty
  // choice: the server's; `any` is the empty choice of a targeting field),
  // a number with its bounds, else text.
  function fieldInput(name, s, any) {
    const numeric = s.type === 'integer' || s.type === 'number';
    const attrs = { name, title: plain(s.description) || null };
    if (s.enum || s.type === 'boolean') {
      const shown = (v) => (s.type === 'boolean' ? (v ? 'on' : 'off') : String(v));
      const empty = any ? 'any' : s.default != null ? shown(s.default) + ' (default)' : null;
      const values = (s.enum || [true, false]).filter((v) => any || v !== s.default);
      const dataset = numeric ? { num: 'true' } : s.type === 'boolean' ? { bool: 'true' } : {};
      return h('select', Object.assign(attrs, { dataset }),
        empty != null ? h('option', { value: '' }, empty) : '',
        values.map((v) => h('option', { value: String(v) }, shown(v))));
    }
    if (numeric) {
      const step = s.type === 'integer' ? 1 : s.maximum != null && s.maximum - (s.minimum || 0) <= 1 ? 0.05 : 0.1;
      const max = s.maximum != null && s.exclusiveMaximum === true ? s.maximum - step : s.maximum;
      return h('input', Object.assign(attrs, {
        type: 'number', min: s.minimum, max, step, placeholder: s.default != null ? String(s.default) : null,
        inputmode: s.type === 'integer' ? 'numeric' : 'decimal',
      }));
    }
    if (s.type === 'object') { // a JSON value (a status rule's body), written as JSON
      return h('input', Object.assign(attrs, { type: 'text', dataset: { json: 'true' }, placeholder: '{"error": {"code": "...", "message": "..."}}', autocomplete: 'off' }));
    }
    return h('input', Object.assign(attrs, { type: 'text', maxlength: s.maxLength, placeholder: s.default != null ? String(s.default) : null, autocomplete: 'off' }));
  }

  // buildRuleForm offers the document's kinds (those that strike requests,
  // then those decided in the simulation), an input for each parameter,
  // labelled with its title, and the targeting's choices.
  function buildRuleForm() {
    const e = ruleForm.elements;
    const names = Object.keys(F.kinds);
    const group = (label, list) => (list.length ? h('optgroup', { label }, list.map((k) => h('option', {}, k))) : '');
    e.kind.replaceChildren(group('Requests', names.filter((k) => F.kinds[k].classes.length)),
      group('Jobs and deliveries', names.filter((k) => !F.kinds[k].classes.length)));
    for (const l of $$('[data-param]', ruleForm)) l.remove();
    $('#fault-kind-hint').before(...F.params.map((p) => h('label', { dataset: { param: p } }, (F.props[p].title || p) + ' ', fieldInput(p, F.props[p]))));
    for (const t of F.targets) {
      const s = F.props[t];
      const l = $(`[data-target="${CSS.escape(t)}"]`, ruleForm);
      if (!l) $('#fault-target-none').before(h('label', { dataset: { target: t } }, s.title || upper(t), ' ', fieldInput(t, s, true)));
      else if (s.enum && !l.querySelector('select').classList.contains('op-select')) l.querySelector('select').replaceWith(fieldInput(t, s, true));
    }
    ruleFields();
  }

  // ruleFields shows the inputs the chosen kind takes, and only those: a
  // hidden input is disabled, so it is neither checked nor sent. A class is
  // offered when the kind strikes more than one.
  function ruleFields() {
    const e = ruleForm.elements;
    const k = F && F.kinds[e.kind.value];
    if (!k) return;
    const on = new Set(k.params);
    if (on.has('distribution')) {
      const mine = DISTRIBUTIONS[e.distribution.value] || [];
      for (const p of Object.values(DISTRIBUTIONS).flat()) if (!mine.includes(p)) on.delete(p);
    }
    const targets = new Set(k.targets.filter((t) => t !== 'class' || k.classes.length > 1));
    const show = (label, yes) => {
      label.hidden = !yes;
      for (const el of $$('input, select', label)) el.disabled = !yes;
    };
    for (const l of $$('[data-param]', ruleForm)) show(l, on.has(l.dataset.param));
    // The kind's parameters in its own order (a parameter kinds share is
    // declared once, where the first kind takes it).
    const hint = $('#fault-kind-hint');
    for (const p of k.params) {
      const l = $(`[data-param="${CSS.escape(p)}"]`, ruleForm);
      if (l) hint.before(l);
    }
    for (const l of $$('[data-target]', ruleForm)) show(l, targets.has(l.dataset.target));
    if (targets.has('class')) {
      const sel = e.class;
      const keep = sel.value;
      sel.replaceChildren(h('option', { value: '' }, 'any'), ...k.classes.map((c) => h('option', {}, c)));
      sel.value = k.classes.includes(keep) ? keep : '';
    }
    $('#fault-target-none').hidden = targets.size > 0;
    $('#fault-kind-hint').replaceChildren(...marked(upper(k.doc)));
  }
  ruleForm.elements.kind.addEventListener('change', () => { ruleError(''); ruleFields(); });
  ruleForm.addEventListener('change', (ev) => { if (ev.target.name === 'distribution') ruleFields(); });

  // ruleError says, in the form, why a spec was refused, and marks the
  // fields it names; '' takes it away.
  function ruleError(message, fields = []) {
    const p = $('#fault-rule-error');
    for (const el of $$('[aria-invalid]', ruleForm)) {
      el.removeAttribute('aria-invalid');
      const rest = (el.getAttribute('aria-describedby') || '').split(' ').filter((x) => x && x !== p.id);
      if (rest.length) el.setAttribute('aria-describedby', rest.join(' '));
      else el.removeAttribute('aria-describedby');
    }
    p.hidden = !message;
    p.replaceChildren(message, fields.length ? h('span', { class: 'fields' }, fields.length === 1 ? 'Field: ' : 'Fields: ',
      fields.map((x, i) => [i ? ', ' : '', h('code', {}, x)])) : '');
    let first = null;
    for (const name of fields) {
      const el = ruleForm.elements[name];
      if (!el || el.disabled) continue;
      el.setAttribute('aria-invalid', 'true');
      el.setAttribute('aria-describedby', ((el.getAttribute('aria-describedby') || '') + ' ' + p.id).trim());
      first = first || el;
    }
    if (first) first.focus();
  }

  // ruleSpec reads the form: the fields filled in alone, numbers as numbers.
  function ruleSpec() {
    const spec = { kind: ruleForm.elements.kind.value };
    const bad = [];
    for (const el of ruleForm.elements) {
      if (!el.name || el.name === 'kind' || el.disabled) continue;
      if (el.validity.badInput) bad.push(el.name);
      const v = el.value.trim();
      if (v !== '' && el.dataset.json) {
        try { spec[el.name] = JSON.parse(v); } catch { bad.push(el.name); }
        continue;
      }
      if (v !== '') spec[el.name] = el.dataset.bool ? v === 'true' : el.type === 'number' || el.dataset.num ? Number(v) : v;
    }
    return { spec, bad };
  }
  ruleForm.addEventListener('submit', act(async () => {
    const { spec, bad } = ruleSpec();
    if (bad.length) return ruleError('Not a number.', bad);
    ruleError('');
    let rule;
    try {
      rule = await api('POST', inScope('/faults/rules'), spec);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 400) throw err;
      const fields = ((err.error.details || {}).violations || []).map((v) => v.field).filter(Boolean);
      return ruleError(err.message, [...new Set(fields)]);
    }
    toast(`Fault rule ${rule.id} (${rule.kind}) added.`, true);
    S.faults = await api('GET', inScope('/faults'));
    renderFaults();
  }));

  // A rule's row: whom it targets ("any" when it sets none of what its kind
  // takes), its parameters, how often it strikes.
  const kindOf = (r) => (F && F.kinds[r.kind]) || { classes: [], params: [], targets: [] };
  function ruleTarget(r) {
    const set = [r.class, r.operation === '*' ? 'every operation' : r.operation, r.modality].filter(Boolean);
    if (set.length) return set.join(' · ');
    const k = kindOf(r);
    if (k.targets.length || k.classes.length) return 'any';
    return h('span', { class: 'hint', title: `${r.kind} takes no targeting: it is decided in the simulation, for every job or delivery in its scope` }, 'no targeting');
  }
  function ruleParams(r) {
    const set = (F ? F.params : []).filter((k) => r[k] != null);
    return set.length ? set.map((k, i) => [i ? ' ' : '', h('code', {}, `${k}=${r[k]}`)]) : h('span', { class: 'hint' }, 'none');
  }
  const ruleStrikes = (r) => [r.probability != null ? `probability ${r.probability}` : 'always', r.first ? `first ${r.first}` : ''].filter(Boolean).join(' · ');
  // ruleKind names the kind, and the shorthand endpoint that made the rule.
  const ruleKind = (r) => [r.kind, r.via ? h('div', { class: 'hint via', title: `Made by the ${r.via} shorthand of the control API` }, 'via ' + r.via) : ''];
  // deleteRule deletes a rule; one gone already (spent, or deleted
  // elsewhere: no event tells of it) leaves the table as the rules are now.
  async function deleteRule(r) {
    try {
      await faultsCall('DELETE', '/faults/rules/' + encodeURIComponent(r.id));
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 404 || (err.error.details || {}).resource === 'sandbox') throw err;
      toast(`Fault rule ${r.id} was gone already.`, true);
      S.faults = await api('GET', inScope('/faults'));
      renderFaults();
    }
  }
  function renderRules() {
    const rules = S.faults.rules;
    // Keep the focus in the table: on the row it was on, or the next one.
    const f = document.activeElement;
    const row = f && f.closest && f.closest('#fault-rule-table tbody tr');
    const at = row ? [row.dataset.rule, [...row.parentNode.children].indexOf(row)] : null;
    // A sandbox's list ends with the global rules, which strike it too:
    // they are shown, marked, and deleted from the whole server's scope.
    $('#fault-rule-table tbody').replaceChildren(...rules.map((r) => h('tr', { dataset: { rule: r.id, kind: r.kind, scope: r.scope || 'own' } },
      h('td', {}, h('code', {}, r.id)),
      h('td', { class: 'kind' }, ruleKind(r)),
      h('td', { class: 'target' }, ruleTarget(r)),
      h('td', { class: 'params' }, ruleParams(r)),
      h('td', { class: 'wide' }, ruleStrikes(r)),
      h('td', { class: 'num matched' }, r.matched),
      h('td', { class: 'num hits' }, r.hits),
      h('td', {}, r.scope === 'global' ? h('span', { class: 'hint' }, 'global') : h('button', {
        type: 'button', class: 'small danger', dataset: { action: 'delete' }, 'aria-label': `Delete fault rule ${r.id} (${r.kind})`,
        onclick: act(() => deleteRule(r)),
      }, 'Delete')))));
    $('#fault-rules-empty').hidden = rules.length > 0;
    if (at) {
      const rows = $$('#fault-rule-table tbody tr');
      const again = rows.find((x) => x.dataset.rule === at[0]) || rows[Math.min(at[1], rows.length - 1)];
      const button = again && again.querySelector('button');
      if (button) button.focus();
      else ruleForm.elements.kind.focus();
    }
  }
  const num = (v) => (v === '' ? undefined : Number(v));
  $('#fault-fail-next').addEventListener('submit', act(async (ev) => {
    const e = ev.target.elements;
    const rule = { count: num(e.count.value), stage: e.stage.value };
    for (const k of ['modality', 'model', 'code']) if (e[k].value) rule[k] = e[k].value.trim();
    await faultsCall('POST', '/faults/fail-next', rule);
  }));
  $('#fault-rate').addEventListener('submit', act(async (ev) => {
    await faultsCall('PUT', '/faults/failure-rate', { rate: num(ev.target.elements.rate.value) });
  }));
  $('#fault-platform').addEventListener('submit', act(async (ev) => {
    await faultsCall('PUT', '/faults/platforms/' + encodeURIComponent(ev.target.elements.platform.value));
  }));
  $('#fault-latency').addEventListener('submit', act(async (ev) => {
    const e = ev.target.elements;
    await faultsCall('PUT', '/faults/latency/' + encodeURIComponent(e.operation.value), { ms: num(e.ms.value) });
  }));
  $('#fault-force').addEventListener('submit', act(async (ev) => {
    const e = ev.target.elements;
    await faultsCall('POST', '/faults/responses', { operation: e.operation.value, status: num(e.status.value), count: num(e.count.value) });
  }));

  // --- scope: the whole server, or one sandbox

  // inScope names the chosen sandbox in a call of the faults, the journal
  // or coverage; without it they are the whole server's.
  function inScope(path) {
    return S.scope ? path + (path.includes('?') ? '&' : '?') + 'sandbox=' + encodeURIComponent(S.scope) : path;
  }
  const scoped = () => S.sandboxes.find((x) => x.id === S.scope) || null;
  const SCOPED = ['jobs', 'library', 'publications', 'journal', 'ledger', 'coverage', 'faults'];

  function fillScope() {
    const sel = $('#scope');
    sel.replaceChildren(h('option', { value: '' }, 'Whole server'),
      ...S.sandboxes.map((x) => h('option', { value: x.id }, `${x.name} · ${x.id}`)));
    sel.value = S.scope;
  }

  // setScope chooses the whole server ('') or a sandbox, for this tab.
  function setScope(id) {
    const changed = id !== S.scope;
    S.scope = id;
    if (id) sessionStorage.setItem(SCOPE_KEY, id);
    else sessionStorage.removeItem(SCOPE_KEY);
    $('#scope').value = id;
    scopeFilters(changed);
    if (!changed) return;
    S.journal = [];
    S.journalLoaded = false;
    S.journalSelected = '';
    forgetJournalPages();
    $('#journal-detail').replaceChildren(h('p', { class: 'empty' }, 'Choose a request to see its bodies.'));
    if (SCOPED.includes(current)) reload(current);
    redraw('sandboxes');
  }
  $('#scope').addEventListener('change', (ev) => setScope(ev.target.value));
  // wholeServer is a button that leaves the scope; the focus goes to the
  // scope's selector, as the button goes away.
  const wholeServer = (label) => h('button', { type: 'button', class: 'small', onclick: () => { setScope(''); $('#scope').focus(); } }, label);

  // scopeFilters shows the scope in the panels: the workspace selectors
  // hold the sandbox's workspace (another needs the whole server first),
  // and each scoped panel says whose share it shows.
  function scopeFilters(changed) {
    const sb = scoped();
    for (const sel of $$('.ws-select')) {
      if (sb) {
        const v = String(sb.workspace_id);
        if (![...sel.options].some((o) => o.value === v)) sel.append(wsOption({ id: sb.workspace_id, name: sb.name, sandbox_id: sb.id }));
        sel.value = v;
      } else if (changed && sel.disabled) {
        sel.value = sel.querySelector('option[value=""]') ? '' : String((S.wsList[0] && S.wsList[0].id) || '');
      }
      sel.disabled = !!sb;
      sel.title = sb ? `The scope is sandbox ${sb.name}: choose Whole server, above, to show another workspace.` : '';
    }
    for (const p of $$('.scope-note')) {
      if (p.dataset.for === S.scope) continue; // drawn already: a button in it keeps the focus
      p.dataset.for = S.scope;
      p.classList.toggle('on', !!sb);
      p.hidden = !sb && !p.dataset.all;
      if (sb) p.replaceChildren('Sandbox ', h('strong', {}, sb.name), ` (${sb.id}, workspace #${sb.workspace_id}): ${p.dataset.what} alone. `, wholeServer('Show the whole server'));
      else p.replaceChildren(p.dataset.all || '');
    }
    $('#journal-clear').textContent = sb ? 'Clear its journal' : 'Clear journal';
    $('#coverage-reset').textContent = sb ? 'Reset its coverage' : 'Reset coverage';
  }

  // --- sandboxes

  // loadSandboxes reads the sandboxes; when the chosen one is gone, the
  // scope is the whole server again.
  // Loads of the list may overlap (an event, an action): only the answer to
  // the last one started is drawn, never an older list that came late.
  let sandboxLoads = 0;
  async function loadSandboxes() {
    const seq = ++sandboxLoads;
    const list = (await api('GET', '/sandboxes')).data;
    if (seq !== sandboxLoads) return;
    S.sandboxes = list;
    fillScope();
    if (S.scope && !scoped()) {
      const gone = S.scope;
      setScope('');
      toast(`Sandbox ${gone} is gone: the panels show the whole server.`, true);
    } else {
      scopeFilters();
    }
    redraw('sandboxes');
  }
  async function loadSandboxesPanel() {
    await Promise.all([loadSandboxes(), loadWorkspaceList()]);
  }

  // listsChanged reads the sandboxes and the workspaces again, once per
  // burst, whatever the panel shown: the scope and the selectors need them.
  let listsTimer = 0;
  function listsChanged() {
    if (listsTimer) return;
    listsTimer = setTimeout(async () => {
      listsTimer = 0;
      try {
        await loadSandboxesPanel();
      } catch (err) {
        failed(err);
      }
    }, 250);
  }

  // forgetRecords drops what the panels hold after a sandbox was reset or
  // deleted (no event tells what went): they read again when shown.
  function forgetRecords() {
    S.jobsLoaded = S.publicationsLoaded = S.journalLoaded = false;
    forgetJournalPages();
    S.workspaces = [];
  }

  function sandboxButton(x, action, label, title, fn) {
    return h('button', {
      type: 'button', class: 'small' + (action === 'delete' ? ' danger' : ''), dataset: { action }, title,
      'aria-label': `${label} sandbox ${x.name}`, onclick: act(() => fn(x)),
    }, label);
  }
  function renderSandboxes() {
    // Keep the focus on the button it was on: the rows are drawn anew.
    const f = document.activeElement;
    const was = f && f.closest && f.closest('#sandbox-table tr') ? [f.closest('tr').dataset.sandbox, f.dataset.action] : null;
    $('#sandbox-table tbody').replaceChildren(...S.sandboxes.map((x) => {
      const chosen = x.id === S.scope;
      return h('tr', { dataset: { sandbox: x.id, ws: x.workspace_id }, class: chosen ? 'selected' : null },
        h('td', {}, h('strong', {}, x.name), h('div', { class: 'hint mono' }, x.id)),
        h('td', { class: 'wide' }, x.from),
        h('td', { class: 'num' }, x.workspace_id),
        h('td', { class: 'num balance' }, x.credits_balance.toLocaleString('en')),
        h('td', { class: 'time wide', title: x.created_at }, full(x.created_at)),
        h('td', {}, h('div', { class: 'buttons' },
          h('button', {
            type: 'button', class: 'small', dataset: { action: 'scope' }, 'aria-pressed': String(chosen),
            'aria-label': `Scope the panels to sandbox ${x.name}`, onclick: () => setScope(chosen ? '' : x.id),
          }, 'Scope'),
          sandboxButton(x, 'reset', 'Reset', 'Back to its starting state: nothing it made, no faults, an empty journal and coverage', resetSandbox),
          sandboxButton(x, 'run', 'Run', 'Finish its work now: apply its events due within the hour, without moving the shared clock', runSandbox),
          sandboxButton(x, 'delete', 'Delete', 'Delete it with every record it made', deleteSandbox))));
    }));
    $('#sandboxes-empty').hidden = S.sandboxes.length > 0;
    if (was) {
      const again = $(`#sandbox-table tr[data-sandbox="${CSS.escape(was[0])}"] button[data-action="${CSS.escape(was[1] || '')}"]`);
      if (again) again.focus();
    }
  }
  const sandboxPath = (x, tail) => '/sandboxes/' + encodeURIComponent(x.id) + (tail || '');
  async function resetSandbox(x) {
    await api('POST', sandboxPath(x, '/reset'));
    forgetRecords();
    toast(`Sandbox ${x.name} is back to its start: what it made, its faults, journal and coverage are gone.`, true);
    await loadSandboxes();
  }
  async function runSandbox(x) {
    const r = await api('POST', sandboxPath(x, '/run'), { limit: '1h' });
    toast(`Sandbox ${x.name}: ${r.events_applied} event${r.events_applied === 1 ? '' : 's'} applied now; the clock did not move.`, true);
  }
  async function deleteSandbox(x) {
    if (!(await confirmAction(`Delete sandbox ${x.name}?`, `${x.id}, workspace #${x.workspace_id}: its keys, and every record it made, go with it. Its keys answer 401 from then on.`, 'Delete'))) return;
    await api('DELETE', sandboxPath(x));
    forgetRecords();
    toast(`Sandbox ${x.name} is deleted.`, true);
    await loadSandboxesPanel();
  }
  $('#sandbox-create').addEventListener('submit', act(async (ev) => {
    const form = ev.target;
    const spec = {};
    for (const k of ['name', 'from']) if (form.elements[k].value.trim()) spec[k] = form.elements[k].value.trim();
    const x = await api('POST', '/sandboxes', spec);
    form.reset();
    toast(`Sandbox ${x.name} (${x.id}) is ready: workspace #${x.workspace_id}.`, true);
    await loadSandboxesPanel();
  }));

  // confirmAction asks before what cannot be undone; Cancel has the focus.
  // The dialog's close event is queued: one left from the previous question
  // may come while the dialog is open again. It answers the previous
  // question (with no), never this one.
  let pendingConfirm = null;
  function confirmAction(title, text, ok) {
    const d = $('#confirm-dialog');
    if (pendingConfirm) pendingConfirm(false);
    $('#confirm-title').textContent = title;
    $('#confirm-text').textContent = text;
    $('#confirm-ok').textContent = ok;
    d.returnValue = '';
    d.showModal();
    return new Promise((resolve) => {
      const onClose = () => {
        if (!d.open) finish(d.returnValue === 'ok');
      };
      const finish = (answer) => {
        d.removeEventListener('close', onClose);
        if (pendingConfirm === finish) pendingConfirm = null;
        resolve(answer);
      };
      pendingConfirm = finish;
      d.addEventListener('close', onClose);
    });
  }

  // --- live: /_mock/events

  let events = null;
  let wasLive = false;
  function setLive(state, text) {
    const el = $('#live');
    el.dataset.state = state;
    el.textContent = text || state;
  }
  function connect() {
    if (events) events.close();
    events = new EventSource('/_mock/events' + (token() ? '?token=' + encodeURIComponent(token()) : ''));
    const on = (name, fn) => events.addEventListener(name, (e) => fn(JSON.parse(e.data)));
    on('ready', (c) => {
      setClock(c);
      setLive('live');
      if (wasLive) { // what happened while away
        reload(current);
        listsChanged();
      }
      wasLive = true;
    });
    on('clock', (c) => { setClock(c); stale('workspaces'); });
    on('job', onJob);
    on('publication', onPublication);
    on('ledger', onLedger);
    on('journal', onJournal);
    on('workspaces', () => {
      S.workspaces = [];
      stale('workspaces');
      listsChanged(); // a sandbox, maybe
    });
    const again = async () => {
      S.jobsLoaded = S.publicationsLoaded = S.journalLoaded = false;
      forgetJournalPages();
      S.workspaces = [];
      try {
        await loadSandboxesPanel(); // first: the chosen sandbox may be gone
      } catch (err) {
        failed(err);
      }
      reload(current);
    };
    on('reset', again);
    on('overflow', again);
    events.onerror = () => setLive('error', 'reconnecting');
  }

  async function start() {
    try {
      setClock(await api('GET', '/clock'));
    } catch (err) {
      if (err instanceof Unauthorized) askToken();
      else toast(err.message);
      return;
    }
    try {
      await loadSandboxes();
    } catch (err) {
      if (!(err instanceof Unauthorized)) setScope(''); // the scope cannot be checked
      failed(err);
    }
    connect();
    await show(location.hash.slice(1));
  }
  window.addEventListener('hashchange', () => show(location.hash.slice(1)));
  start();
})();
