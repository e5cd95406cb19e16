/* Cartouche replay viewer: plain JavaScript, no build step, no dependencies.
 *
 * Talks to the public API as a spectator (no token): GET /v1/games (list; with status=waiting
 * the lobby: tables still waiting for players, their open seats and who sits), GET /v1/games/{id}
 * (the head), GET /v1/games/{id}/states/{v} (time travel), GET /v1/games/{id}/events (the log),
 * and follows a live game through GET /v1/games/{id}/events/stream (SSE) when the server has it,
 * else by polling GET /v1/games/{id} every second. Tournaments: GET /v1/tournaments (the list)
 * and GET /v1/tournaments/{id} (standings and rounds; each game links to its page here).
 *
 * Every string that comes from the server (player names, ids) is inserted as text, never as HTML.
 */
"use strict";
(function () {
  // ------------------------------------------------------------------ small DOM helpers
  const SVGNS = "http://www.w3.org/2000/svg";
  const $ = (sel, root) => (root || document).querySelector(sel);

  function build(el, attrs, children) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") el.textContent = String(v);
      else if (k === "class") el.setAttribute("class", v);
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }
  const h = (tag, attrs, ...children) => build(document.createElement(tag), attrs, children);
  const s = (tag, attrs, ...children) => build(document.createElementNS(SVGNS, tag), attrs, children);

  // One colour per seat (eight: the most seats of any game), for name tags, pawns and marks
  // alike; the text on each has 4.5:1 contrast (white, dark on the yellow).
  const SEAT_COLOURS = ["#d32f2f", "#1e66c8", "#2e7d32", "#e0a100", "#8e24aa", "#00838f",
                        "#ad1457", "#6d4c41"];
  const SEAT_INK = ["#fff", "#fff", "#fff", "#2b2620", "#fff", "#fff", "#fff", "#fff"];
  const seatIndex = (i) => ((i % SEAT_COLOURS.length) + SEAT_COLOURS.length) % SEAT_COLOURS.length;
  const seatColour = (i) => SEAT_COLOURS[seatIndex(i)];
  const seatInk = (i) => SEAT_INK[seatIndex(i)];
  // Each game's name and public tables (card tables and the like), from the game modules
  // (GET /viewer/games.json); empty until loaded, and then drawing falls back to raw ids.
  let GAME_DATA = {};
  const typeName = (type) => (GAME_DATA[type] && GAME_DATA[type].name) || type;
  const tables = (type) => (GAME_DATA[type] && GAME_DATA[type].tables) || {};

  // ------------------------------------------------------------------ API
  class ApiError extends Error {
    constructor(status, body) {
      const err = (body && body.error) || {};
      super(err.message || `HTTP ${status}`);
      this.status = status; this.code = err.code;
    }
  }
  // The API requests this page is waiting for (each {at: start time}): the live watchdog
  // reads them to tell when the browser queues them behind open event streams.
  const inflight = new Set();
  // A busy server's answers (429, 503) are asked for again, up to API_RETRIES times, after
  // its Retry-After (seconds, at most API_RETRY_MAX_S) or else 1, 2, 4 s.
  const API_RETRIES = 3, API_RETRY_MAX_S = 10;
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  async function api(path) {
    for (let attempt = 0; ; attempt++) {
      const req = { at: Date.now() };
      inflight.add(req);
      let r, body = null;
      try {
        r = await fetch(path, { headers: { Accept: "application/json" }, cache: "no-store" });
        try { body = await r.json(); } catch (e) { body = null; }
      } finally {
        inflight.delete(req);
      }
      if (r.ok) return body;
      if ((r.status === 429 || r.status === 503) && attempt < API_RETRIES) {
        const after = Number(r.headers.get("Retry-After") || "x");
        const wait = Number.isFinite(after) && after >= 0 ? Math.min(after, API_RETRY_MAX_S)
          : 2 ** attempt;
        await sleep(wait * 1000);
        continue;
      }
      throw new ApiError(r.status, body);
    }
  }

  // ------------------------------------------------------------------ app state
  const app = {
    list: { page: 1, perPage: 20, total: 0 },
    id: null,          // open game
    head: null,        // latest GET /v1/games/{id}
    events: [],        // events[version] = event (as a spectator may see it)
    states: new Map(), // version -> view, the STATES_CACHED last used (see cacheState)
    statesGen: 0,      // bumps with every new states cache (see getState)
    version: 0,        // version shown
    shownView: null,
    invitees: new Map(), // invited player id -> name (null: asked for), for the open game
    seq: 0,            // bumps on every navigation: stale responses are dropped
    nav: 0,            // bumps on every game, tournament or list opened
    live: null,        // {es, poll, safety}
    refreshing: false,
    lastDir: 1,
  };

  // ------------------------------------------------------------------ game list
  const gameHref = (id) => `/viewer?game=${encodeURIComponent(id)}`;
  const tournamentHref = (id) => `/viewer?tournament=${encodeURIComponent(id)}`;
  // A link's click handler that opens its target in this page (a plain click; with a modifier
  // key or another button the browser opens the link itself, in a new tab or window).
  const inPage = (open) => (e) => {
    if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    open();
  };
  const DEFAULT_TITLE = document.title;
  // A polite announcement for screen readers (the live game's news).
  function announce(text) { $("#announce").textContent = text; }
  // A seat as the list and the views show it ({name, controller: "open", invited?}): who holds
  // it, or that nobody does yet.
  const seatLabel = (p) => p.controller !== "open" ? `${p.name}${p.bot ? " (bot)" : ""}`
    : p.invited ? "invited" : "open seat";
  // A table's seats in a line: "1 open · Ada, Bob" (empty for a game that never waited).
  function seatsSummary(players) {
    if (!players) return "";
    const open = players.filter((p) => p.controller === "open").length;
    const seated = players.filter((p) => p.controller !== "open").map(seatLabel).join(", ");
    return [open ? `${open} open` : "full", seated].filter(Boolean).join(" · ");
  }

  // The type filter offers every game type the server hosts, in catalog order (games.json).
  function typeFilter() {
    const select = $("#f-type");
    for (const [type, data] of Object.entries(GAME_DATA)) {
      select.appendChild(h("option", { value: type, text: data.name || type }));
    }
  }

  async function loadList() {
    const params = new URLSearchParams({ page: app.list.page, per_page: app.list.perPage });
    const type = $("#f-type").value, status = $("#f-status").value;
    if (type) params.set("type", type);
    if (status) params.set("status", status);
    const err = $("#list-error");
    // answers can arrive out of order (a filter changed while the first list was loading):
    // only the latest request's answer is drawn
    const seq = (app.list.seq = (app.list.seq || 0) + 1);
    try {
      const data = await api(`/v1/games?${params}`);
      if (seq !== app.list.seq) return;
      err.hidden = true;
      app.list.total = data.total;
      const tbody = $("#games tbody");
      tbody.replaceChildren(...data.games.map((g) => h("tr", {
        "data-id": g.id, class: g.id === app.id ? "current" : null,
        onclick: (e) => { if (!e.target.closest("a")) openGame(g.id, null, true); },
      },
        h("td", { class: "mono", title: g.id },
          h("a", { href: gameHref(g.id), text: g.id.slice(0, 10),
                   onclick: inPage(() => openGame(g.id, null, true)) })),
        h("td", { text: typeName(g.type) }),
        h("td", { class: `status st-${g.status}`, text: g.status }),
        h("td", { class: "version", text: g.version }),
        h("td", { class: "seats", "data-open": g.seats ? g.open_seats : null,
                  title: g.seats ? g.seats.map((p) => `seat ${p.seat}: ${seatLabel(p)}`).join("\n") : null,
                  text: seatsSummary(g.seats) }),
        h("td", { class: "muted created", title: g.created_at, text: g.created_at ? new Date(g.created_at).toLocaleString() : "" }),
      )));
      if (!data.games.length) tbody.replaceChildren(h("tr", {}, h("td", { colspan: 6, class: "muted", text: "no games" })));
      const pages = Math.max(1, Math.ceil(data.total / app.list.perPage));
      $("#page-info").textContent = `page ${app.list.page} of ${pages} · ${data.total} games`;
      $("#prev-page").disabled = app.list.page <= 1;
      $("#next-page").disabled = app.list.page >= pages;
    } catch (e) {
      if (seq !== app.list.seq) return;
      err.hidden = false;
      err.textContent = `Could not list games: ${e.message}`;
    }
  }

  // ------------------------------------------------------------------ tournaments
  async function loadTournaments() {
    const err = $("#tournament-list-error");
    try {
      const data = await api("/v1/tournaments?per_page=20");
      err.hidden = true;
      const tbody = $("#tournaments tbody");
      tbody.replaceChildren(...data.tournaments.map((t) => h("tr", {
        "data-id": t.id,
        onclick: (e) => { if (!e.target.closest("a")) openTournament(t.id, true); },
      },
        h("td", { title: t.id },
          h("a", { href: tournamentHref(t.id), text: t.name,
                   onclick: inPage(() => openTournament(t.id, true)) })),
        h("td", { text: typeName(t.type) }),
        h("td", { text: `${t.format === "swiss" ? "Swiss" : "round robin"}, ` +
                        `${t.rounds_total} round${t.rounds_total === 1 ? "" : "s"}` +
                        `${t.duplicate ? ", duplicate" : ""}` }),
        h("td", { class: `status st-${t.status}`, text: t.status }),
        h("td", { class: "version", text: t.participants }),
      )));
      if (!data.tournaments.length) tbody.replaceChildren(h("tr", {}, h("td", { colspan: 5, class: "muted", text: "no tournaments" })));
    } catch (e) {
      err.hidden = false;
      err.textContent = `Could not list tournaments: ${e.message}`;
    }
  }


  // A user's move to another page of the viewer (a game or tournament opened from a list or a
  // link) is a history entry of its own; stepping through a game's versions replaces the entry.
  function setUrl(params, push) {
    const url = new URL(location.href);
    url.search = "";
    url.hash = "";
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    if (url.href === location.href) return;
    if (push) history.pushState(null, "", url);
    else history.replaceState(null, "", url);
  }

  // Where the panes are stacked (a narrow screen: the open one first), a game or tournament
  // opened from further down the page is scrolled to.
  function toPane(sel) {
    const top = $(sel).getBoundingClientRect().top;
    if (top < 0 || top > window.innerHeight / 2) $(sel).scrollIntoView({ block: "start" });
  }

  // Back to the lists alone (the viewer's own address).
  function closeAll() {
    stopLive();
    stopTournament();
    app.paused = false;
    ++app.seq; ++app.nav;
    app.id = null; app.head = null; app.tournament = null;
    $("#game-pane").hidden = true;
    $("#tournament-pane").hidden = true;
    $("#empty-pane").hidden = false;
    document.title = DEFAULT_TITLE;
    for (const tr of document.querySelectorAll("#games tbody tr.current")) {
      tr.classList.remove("current");
    }
  }

  async function openTournament(id, push) {
    stopLive();
    stopTournament();
    app.paused = false;
    const seq = ++app.seq;
    ++app.nav;
    app.id = null; app.head = null; app.tournament = id;
    $("#empty-pane").hidden = true;
    $("#game-pane").hidden = true;
    $("#tournament-pane").hidden = false;
    if (push) toPane("#tournament-pane");
    $("#tournament-error").hidden = true;
    setUrl({ tournament: id }, push);
    let t;
    try {
      t = await api(`/v1/tournaments/${encodeURIComponent(id)}`);
    } catch (e) {
      if (seq !== app.seq) return;
      const err = $("#tournament-error");
      err.hidden = false; err.textContent = `Could not open tournament ${id}: ${e.message}`;
      return;
    }
    if (seq !== app.seq) return;
    renderTournament(t);
    followTournament(id, t, seq);
  }

  // A running tournament's page asks for it again every TOURNAMENT_POLL_MS (a stream would
  // hold one of the browser's few connections to the host; see startLive) and redraws it,
  // until it is finished or the page moves on.
  const TOURNAMENT_POLL_MS = 3000;
  function followTournament(id, t, seq) {
    if (t.status === "finished") return;
    app.tournamentTimer = setTimeout(async () => {
      if (seq !== app.seq) return;
      let fresh = t;
      try {
        fresh = await api(`/v1/tournaments/${encodeURIComponent(id)}`);
        if (seq !== app.seq) return;
        $("#tournament-error").hidden = true;
        // redrawn only when it changed (a redraw would take the focus off a game's link)
        if (JSON.stringify(fresh) !== JSON.stringify(t)) renderTournament(fresh);
      } catch (e) {
        if (seq !== app.seq) return;
        const err = $("#tournament-error");
        err.hidden = false; err.textContent = `Could not update tournament ${id}: ${e.message}`;
      }
      followTournament(id, fresh, seq);
    }, TOURNAMENT_POLL_MS);
  }
  function stopTournament() {
    clearTimeout(app.tournamentTimer);
    app.tournamentTimer = null;
  }

  function renderTournament(t) {
    const names = new Map(t.participants.map((p) => [p.player, p.name]));
    const who = (pid) => names.get(pid) || pid;
    $("#tournament-title").textContent = t.name;
    document.title = `${t.name} · ${DEFAULT_TITLE}`;
    $("#tournament-meta").textContent = `${typeName(t.type)} · ${t.format === "swiss" ? "Swiss" : "round robin"} · ` +
      `round ${t.rounds.length} of ${t.rounds_total} · ${t.seats_per_game} seats a game` +
      `${t.duplicate ? " · duplicate deals" : ""} · ${t.status}`;
    $("#standings tbody").replaceChildren(...t.standings.map((r) => h("tr", { "data-player": r.player },
      h("td", { class: "version", text: r.rank }),
      h("td", { title: r.player, text: who(r.player) }),
      h("td", { class: "version", text: r.points }),
      h("td", { class: "version", text: r.tiebreak }),
      h("td", { class: "version", text: r.games }),
    )));
    $("#tournament-rounds").replaceChildren(...t.rounds.map((rnd) => h("div", { class: "round", "data-round": rnd.number },
      h("h4", { text: `Round ${rnd.number}` + (rnd.byes.length ? ` · bye: ${rnd.byes.map(who).join(", ")}` : "") }),
      h("ul", { class: "round-games" }, rnd.games.map((g) => h("li", {},
        h("a", { class: "game-link mono", href: gameHref(g.id), "data-game": g.id,
                 text: g.id.slice(0, 10), onclick: inPage(() => openGame(g.id, null, true)) }),
        ` deal ${g.deal} · `,
        g.seats.map((pid, i) => seatTag(i, who(pid) + (g.result ? ` (#${g.result[i]})` : ""))),
        h("span", { class: `status st-${g.status}`, text: ` ${g.status}` }),
      ))),
    )));
  }

  // ------------------------------------------------------------------ opening a game
  const EVENTS_PAGE = 1000;
  // Up to `limit` events of the open game after `after`, as a spectator sees them, stored in
  // the game's event list (the one of the game open when asked: a late answer for a game left
  // meanwhile goes nowhere). Returns them, and where the next page starts (null: the end).
  async function fetchEventsPage(after, limit) {
    const events = app.events;
    const page = await api(`/v1/games/${encodeURIComponent(app.id)}/events?after=${after}` +
                           `&limit=${limit || EVENTS_PAGE}`);
    for (const ev of page.events) events[ev.version] = ev;
    const end = !page.events.length || page.next_after <= after || page.next_after >= page.version;
    return { events: page.events, next: end ? null : page.next_after };
  }
  // Every event after `after`, page by page.
  async function fetchEvents(after) {
    for (let next = after; next !== null;) next = (await fetchEventsPage(next)).next;
  }

  const OVER = new Set(["finished", "aborted"]); // statuses after which nothing changes
  // A duplicate-deal rotation that has ended while another of its deal is still played: the
  // API withholds its end (finished, no state, no result) until the deal's last one ends.
  const isWithheld = (view) => !!view && view.status === "finished" && view.state === null;

  // The page draws as soon as it has the head, the log's first page and the shown version's
  // event; the rest of the log is added page by page behind it.
  async function openGame(id, version, push) {
    stopLive();
    stopTournament();
    app.paused = false; app.streamStalls = 0;
    ++app.seq;
    const nav = ++app.nav;
    if (push) setUrl({ game: id }, true);
    app.tournament = null;
    app.id = id; app.head = null; app.events = []; app.shownView = null;
    app.invitees = new Map();
    app.states = new Map(); app.statesGen++;
    $("#empty-pane").hidden = true;
    $("#tournament-pane").hidden = true;
    $("#game-pane").hidden = false;
    if (push) toPane("#game-pane");
    $("#game-error").hidden = true;
    $("#board").replaceChildren(h("p", { class: "muted", text: "loading…" }));
    $("#board").dataset.version = "";
    // nothing of the game shown before stays while this one loads (or fails to)
    $("#game-title").textContent = id;
    document.title = DEFAULT_TITLE;
    for (const sel of ["#game-meta", "#status-bar", "#event-version", "#raw-state"]) {
      $(sel).textContent = "";
    }
    $("#event-panel").replaceChildren();
    $("#log").replaceChildren();
    logView.list = []; logView.from = logView.to = 0;
    $("#version-label").textContent = "v –";
    for (const tr of document.querySelectorAll("#games tbody tr")) tr.classList.toggle("current", tr.dataset.id === id);
    let v, first;
    try {
      const head = await api(`/v1/games/${encodeURIComponent(id)}`);
      if (nav !== app.nav) return;
      app.head = head;
      cacheState(head.version, head);
      v = version && version >= 1 ? Math.min(version, head.version) : head.version;
      const own = v > EVENTS_PAGE ? fetchEventsPage(v - 1, 1) : null;
      first = await fetchEventsPage(0);
      await own;
      if (nav !== app.nav) return;
    } catch (e) {
      if (nav !== app.nav) return;
      showError(`Could not open game ${id}: ${e.message}`);
      return;
    }
    renderHeader();
    renderLog();
    show(v);
    try {
      for (let next = first.next; next !== null;) {
        const page = await fetchEventsPage(next);
        if (nav !== app.nav) return;
        appendLog(page.events);
        next = page.next;
        if (page.events.some((ev) => ev.version === app.version)) {
          // the shown version's event has come: its panel, its place in the log, its marks
          renderEvent(app.version);
          highlightLog(app.version);
          if (app.shownView && app.shownView.version === app.version) renderBoard(app.shownView);
        }
      }
    } catch (e) {
      if (nav !== app.nav) return;
      const el = $("#game-error");
      el.hidden = false; el.textContent = `Could not load the whole log: ${e.message}`;
    }
    // a waiting table is followed until it starts too; a hidden tab starts when shown
    if (OVER.has(app.head.status) && !isWithheld(app.head)) return;
    if (document.visibilityState === "hidden") { app.paused = true; setLive("live (paused)"); }
    else follow();
  }

  function showError(msg) {
    if (!app.head) document.title = DEFAULT_TITLE;
    const el = $("#game-error");
    delete el.dataset.live;
    el.hidden = false; el.textContent = msg;
    $("#board").replaceChildren();
  }

  function renderHeader() {
    const g = app.head;
    $("#game-title").textContent = `${typeName(g.type)} · ${g.id}`;
    document.title = `${typeName(g.type)} ${g.id.slice(0, 10)} (${g.status}) · ${DEFAULT_TITLE}`;
    $("#game-rules").href = `/v1/game-types/${encodeURIComponent(g.type)}/rules`;
    const opts = Object.entries(g.options || {}).filter(([k, v]) => k !== "clock" && k !== "setup" && typeof v !== "object")
      .map(([k, v]) => `${k}=${v}`).join(", ");
    const players = (g.players || []).map(seatLabel).join(", ");
    // a fork names its parent game and version in its creation event (version 1, public)
    const created = app.events[1];
    const parent = created && created.type === "GameCreated" && created.data &&
      created.data.forked_from && typeof created.data.forked_from.id === "string"
      ? created.data.forked_from : null;
    const fork = parent && ["custom setup, forked from ", h("a", {
      class: "parent mono", title: parent.id, text: parent.id.slice(0, 10),
      href: `${gameHref(parent.id)}&v=${encodeURIComponent(parent.version)}`,
      onclick: inPage(() => openGame(parent.id, Number(parent.version), true)),
    }), ` at v ${parent.version}`];
    const items = [
      `players: ${players}`, opts && `options: ${opts}`,
      g.created_at && `created ${new Date(g.created_at).toLocaleString()}`,
      g.seed && `seed: ${g.seed}`, fork || (g.setup === "custom" && "custom setup"),
    ].filter(Boolean).flatMap((item, i) => i ? [" · ", item] : [item]).flat();
    // redrawn only when it changed (a redraw would take the focus off the parent's link)
    const meta = $("#game-meta");
    const text = items.map((x) => typeof x === "string" ? x : x.textContent).join("");
    if (meta.textContent !== text) meta.replaceChildren(...items);
    const slider = $("#slider");
    slider.max = String(g.version);
    slider.min = "1";
  }

  const seatName = (i) => {
    const p = app.head && app.head.players && app.head.players[i];
    return p && p.name ? p.name : `seat ${i}`;
  };
  function seatTag(i, label) {
    const tag = h("span", { class: `seat-tag seat-${seatIndex(i)}`, title: `seat ${i}`,
                            text: label !== undefined ? label : seatName(i) });
    tag.style.background = seatColour(i);
    tag.style.color = seatInk(i);
    return tag;
  }

  // ------------------------------------------------------------------ navigation
  function clampVersion(v) {
    const max = app.head ? app.head.version : 1;
    return Math.max(1, Math.min(max, v));
  }

  async function show(v) {
    if (!app.head) return;
    v = clampVersion(v);
    if (v !== app.version) app.lastDir = v > app.version ? 1 : -1;
    app.version = v;
    const seq = ++app.seq;
    $("#slider").value = String(v);
    $("#version-label").textContent = `v ${v} / ${app.head.version}`;
    $("#btn-first").disabled = $("#btn-prev").disabled = v <= 1;
    $("#btn-last").disabled = $("#btn-next").disabled = v >= app.head.version;
    renderEvent(v);
    highlightLog(v);
    setUrl({ game: app.id, v: String(v) }, false);
    let view;
    try {
      view = await getState(v);
    } catch (e) {
      if (seq !== app.seq) return;
      showError(`Could not load version ${v}: ${e.message}`);
      // nothing of the version shown before stays under this one's label
      app.shownView = null;
      $("#status-bar").replaceChildren();
      $("#raw-state").textContent = "";
      return;
    }
    if (seq !== app.seq) return; // the user moved on meanwhile
    $("#game-error").hidden = true;
    app.shownView = view;
    renderStatus(view);
    renderBoard(view);
    $("#raw-state").textContent = JSON.stringify(view.state, null, 1);
    const next = v + app.lastDir;
    if (next >= 1 && next <= app.head.version) getState(next).catch(() => {}); // prefetch
  }

  // The states fetched are kept for stepping back and forth, at most STATES_CACHED of them:
  // the least recently used goes first (a Map iterates in insertion order, and a state used
  // is inserted again). Every other collection of the page is bounded too: the log
  // (app.events, the log's list) by the game's event cap (CARTOUCHE_MAX_EVENTS_PER_GAME),
  // the requests on their way (pending, inflight) by the page's steps and prefetch, the event
  // names a stream listens to by the game's event types.
  const STATES_CACHED = 256;
  function cacheState(v, view) {
    app.states.delete(v);
    app.states.set(v, view);
    while (app.states.size > STATES_CACHED) app.states.delete(app.states.keys().next().value);
  }

  // Requests for states on their way, by the generation of the state cache they are for:
  // every new cache (another game opened, or the game's end making its past public) starts a
  // generation, and an answer asked for in an older one is neither reused nor cached.
  const pending = new Map();
  function getState(v) {
    if (app.states.has(v)) {
      const view = app.states.get(v);
      cacheState(v, view); // (the most recently used now)
      return Promise.resolve(view);
    }
    const gen = app.statesGen;
    const key = `${gen}/${v}`;
    if (pending.has(key)) return pending.get(key);
    const p = api(`/v1/games/${encodeURIComponent(app.id)}/states/${v}`).then((view) => {
      if (gen === app.statesGen) cacheState(v, view);
      return view;
    }).finally(() => pending.delete(key));
    pending.set(key, p);
    return p;
  }

  // ------------------------------------------------------------------ event panel and log
  function summarize(ev) {
    if (!ev) return "";
    const parts = [];
    for (const [k, v] of Object.entries(ev.data || {})) {
      if (k === "seat" || v === null || v === undefined) continue;
      if (typeof v === "object") {
        const j = JSON.stringify(v);
        if (j.length <= 40) parts.push(`${k}=${j}`);
      } else parts.push(`${k}=${v}`);
      if (parts.length >= 4) break;
    }
    return parts.join(" ");
  }

  function renderEvent(v) {
    const ev = app.events[v];
    $("#event-version").textContent = `v${v}`;
    const panel = $("#event-panel");
    if (!ev) {
      panel.replaceChildren(h("p", { class: "muted", text: "No visible event at this version (private to a seat until the game ends)." }));
      return;
    }
    panel.replaceChildren(
      h("div", {},
        h("span", { class: "ev-type", text: ev.type }), " ",
        ev.seat !== null && ev.seat !== undefined ? seatTag(ev.seat) : null,
        ev.data && ev.data.forced ? h("span", { class: "muted", text: " (forced)" }) : null,
        ev.data && ev.data.timeout ? h("span", { class: "muted", text: " (timeout)" }) : null),
      h("div", { class: "muted", text: ev.at ? new Date(ev.at).toLocaleString() : "" }),
      h("pre", { text: JSON.stringify(ev.data, null, 1) }));
  }

  // The log's entries are one tab stop: the current entry (or the first) is focusable with Tab,
  // ↑/↓ move to the neighbouring entry and show it, Enter or Space shows the focused one.
  function logItem(ev) {
    return h("li", { "data-v": ev.version, onclick: () => show(ev.version), title: summarize(ev),
                     tabindex: "-1" },
      h("span", { class: "v", text: ev.version }),
      ev.type, ev.seat !== null && ev.seat !== undefined ? ` · ${seatName(ev.seat)}` : "");
  }
  // The log draws a window of LOG_WINDOW entries around the shown version (a long game's
  // thousands of entries would be laid out on every step otherwise); an entry at either end
  // stands for those left out, and shows the nearest of them (moving the window there).
  const LOG_WINDOW = 500, LOG_MARGIN = 100;
  const logView = { list: [], from: 0, to: 0 }; // the visible events in order; drawn [from, to)
  function renderLog() {
    logView.list = app.events.filter(Boolean);
    drawLogWindow(app.version);
  }
  const appendLog = renderLog; // (a page of the log has come: the same window, filled in)
  // index in logView.list of the last entry at or before version v (0 when none is)
  function logIndex(v) {
    const list = logView.list;
    let lo = 0, hi = list.length - 1, found = 0;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid].version <= v) { found = mid; lo = mid + 1; } else hi = mid - 1;
    }
    return found;
  }
  function moreItem(n, v, which) {
    return h("li", { class: "more muted", "data-v": v, tabindex: "-1", onclick: () => show(v),
                     text: `… ${n} ${which} event${n === 1 ? "" : "s"}` });
  }
  function drawLogWindow(v) {
    const log = $("#log"), list = logView.list;
    const active = document.activeElement;
    const focused = active && log.contains(active) ? active.dataset.v : null;
    const from = Math.max(0, Math.min(logIndex(v) - LOG_WINDOW / 2, list.length - LOG_WINDOW));
    const to = Math.min(list.length, from + LOG_WINDOW);
    logView.from = from; logView.to = to;
    const items = list.slice(from, to).map(logItem);
    if (from > 0) items.unshift(moreItem(from, list[from - 1].version, "earlier"));
    if (to < list.length) items.push(moreItem(list.length - to, list[to].version, "later"));
    log.replaceChildren(...items);
    if (log.firstElementChild) log.firstElementChild.tabIndex = 0;
    highlightLog(v);
    if (focused) {
      const li = log.querySelector(`li[data-v="${focused}"]:not(.more)`)
        || log.querySelector(`li[data-v="${focused}"]`);
      if (li) li.focus();
    }
  }
  function onLogKey(e) {
    const li = e.target.closest("#log li");
    if (!li || e.altKey || e.ctrlKey || e.metaKey) return;
    let to = null;
    if (e.key === "Enter" || e.key === " ") to = li;
    else if (e.key === "ArrowUp") to = li.previousElementSibling;
    else if (e.key === "ArrowDown") to = li.nextElementSibling;
    else return;
    e.preventDefault();
    if (!to) return;
    to.focus();
    show(Number(to.dataset.v));
  }
  function highlightLog(v) {
    const log = $("#log"), list = logView.list;
    const i = logIndex(v);
    const near = (logView.from > 0 && i < logView.from + LOG_MARGIN)
      || (logView.to < list.length && i >= logView.to - LOG_MARGIN);
    if (list.length && near) { drawLogWindow(v); return; } // (then centred: not near again)
    const prev = log.querySelector("li.current");
    if (prev) prev.classList.remove("current");
    const li = log.querySelector(`li[data-v="${v}"]:not(.more)`);
    if (!li) return;
    li.classList.add("current");
    for (const other of log.querySelectorAll('li[tabindex="0"]')) other.tabIndex = -1;
    li.tabIndex = 0;
    // brought into the log's view; the page itself is scrolled only when the focus is in the log
    const box = log.getBoundingClientRect(), at = li.getBoundingClientRect();
    if (at.top >= box.top && at.bottom <= box.bottom) return;
    if (log.contains(document.activeElement)) { li.scrollIntoView({ block: "nearest" }); return; }
    log.scrollTop += at.top - box.top - (box.height - at.height) / 2;
  }

  // ------------------------------------------------------------------ status bar
  function renderStatus(view) {
    const bar = $("#status-bar");
    const items = [];
    const gameStatus = app.head.status;
    items.push(h("span", { class: "pill" }, "game: ",
      h("b", { class: `st-${gameStatus}`, text: gameStatus }),
      isWithheld(app.head) ? " (end withheld until the deal ends)" : ""));
    const atEnd = view.version === app.head.version;
    if (!atEnd) items.push(h("span", { class: "pill muted", text: `replaying version ${view.version}` }));
    const awaiting = view.awaiting || [];
    if (awaiting.length) {
      items.push(h("span", { class: "pill" }, "awaiting: ",
        awaiting.map((a) => [seatTag(a.seat), a.deadline_at ? h("small", { class: "muted", text: ` until ${new Date(a.deadline_at).toLocaleTimeString()} ` }) : " "])));
    } else if (view.status === "active") {
      items.push(h("span", { class: "pill muted", text: "awaiting: nobody" }));
    }
    const result = view.result;
    if (result) {
      const winners = (result.winners || []);
      items.push(h("span", { class: "pill result" }, "result: ",
        winners.length ? ["winner", winners.length > 1 ? "s " : " ", winners.map((w) => [seatTag(w), " "])] : "no winner ",
        "· scores ", (result.scores || []).map((sc, i) => `${seatName(i)} ${sc}`).join(", "),
        result.details && result.details.end_reason ? ` · ended by ${result.details.end_reason}` : "",
        result.details && result.details.ended_by ? ` · ${result.details.ended_by}` : ""));
    }
    if (view.status === "aborted") items.push(h("span", { class: "pill st-aborted", text: "aborted" }));
    const clock = view.clock;
    if (clock && clock.remaining_ms) {
      items.push(h("span", { class: "pill" }, "clock: ", clock.remaining_ms.map((ms, i) =>
        `${seatName(i)} ${ms === null ? "–" : (ms / 1000).toFixed(0) + "s"}`).join(", ")));
    }
    bar.replaceChildren(...items);
  }

  // ------------------------------------------------------------------ board dispatch
  const RENDERERS = {};
  function renderBoard(view) {
    const board = $("#board");
    let node;
    try {
      const fn = RENDERERS[view.type];
      node = view.state === null ? renderWaiting(view)
        : fn ? fn(view.state || {}, view) : renderGeneric(view.state);
    } catch (e) {
      console.error("viewer: cannot draw this state", e);
      node = h("div", {}, h("p", { class: "error", text: `Cannot draw this state: ${e.message}` }), renderGeneric(view.state));
    }
    board.replaceChildren(node);
    board.dataset.type = view.type;
    board.dataset.version = String(view.version);
  }
  // A table before its start (no rules state yet): its seats, held or not.
  function renderWaiting(view) {
    if (isWithheld(view)) {
      return h("div", { class: "waiting withheld" },
        h("h4", { text: "Ended · withheld until the deal ends" }),
        h("p", { text: "This game is one seating of a duplicate deal (a tournament's). Its " +
                       "end, final state and result stay hidden until the deal's other " +
                       "seatings end; this page shows them as soon as they are public." }));
    }
    const title = { waiting: "Waiting for players", aborted: "Aborted before the start" }[view.status]
      || "Before the start";
    return h("div", { class: "waiting" },
      h("h4", { text: title }),
      h("ul", { class: "waiting-seats" }, (view.players || []).map((p, i) =>
        h("li", { "data-seat": i, class: p.controller === "open" ? "unfilled" : null },
          seatTag(i, i), " ", p.invited && p.controller === "open" ? invitee(p.invited) : seatLabel(p)))));
  }
  // An invited seat's player by name (GET /v1/players/{id}, asked once per open game: as many
  // as its seats), the id in its title; "invited player" until, or unless, the name comes.
  function invitee(id) {
    const label = (name) => name ? `invited: ${name}` : "invited player";
    const el = h("span", { class: "invitee", title: id, "data-player": id,
                           text: label(app.invitees.get(id)) });
    if (!app.invitees.has(id)) {
      app.invitees.set(id, null);
      const nav = app.nav;
      api(`/v1/players/${encodeURIComponent(id)}`).then((player) => {
        if (nav !== app.nav || !player || !player.name) return;
        app.invitees.set(id, player.name);
        for (const span of document.querySelectorAll("#board .invitee")) {
          if (span.dataset.player === id) span.textContent = label(player.name);
        }
      }).catch(() => {}); // (the label stays)
    }
    return el;
  }
  function renderGeneric(state) {
    return h("pre", { class: "mono", text: JSON.stringify(state, null, 1) });
  }

  // player panel frame shared by every game
  function playerBox(view, seat, ...content) {
    const awaited = (view.awaiting || []).some((a) => a.seat === seat);
    const winner = view.result && (view.result.winners || []).includes(seat);
    return h("div", { class: `player${awaited ? " awaited" : ""}${winner ? " winner" : ""}`, "data-seat": seat },
      h("div", {}, seatTag(seat, seat), " ", h("span", { class: "name", text: seatName(seat) }),
        awaited ? h("span", { class: "muted", text: " · to play" }) : null,
        winner ? h("span", { text: " · winner" }) : null,
        view.result && view.result.ranks ? h("span", { class: "muted", text: ` · rank ${view.result.ranks[seat]}` }) : null),
      ...content);
  }
  const kv = (label, value) => h("span", {}, `${label} `, h("b", { text: value === null || value === undefined ? "?" : value }));
  const eventAt = (view) => app.events[view.version];

  // ------------------------------------------------------------------ Pharaoh's Wall
  const PW_COLOUR = {
    CAMEL: "#e8b651", MULE: "#a1887f", SNAKE: "#8bc34a", IBIS: "#81d4fa",
    CROCODILE: "#26a69a", FALCON: "#ff8a50", CAT: "#c58fdc",
  };
  function pwCard(id) {
    const m = /^H-([A-Z]+)-(\d+)$/.exec(id || "");
    if (!m) return { id, animal: null };
    const k = Number(m[2]);
    return { id, animal: m[1], k, facing: k <= ((tables("pharaohs-wall").left_facing || {})[m[1]] || 0) ? "LEFT" : "RIGHT" };
  }
  function pwArrow(x, y, facing, size) {
    const d = facing === "LEFT" ? -1 : 1;
    const pts = [[x + d * size, y], [x - d * size * 0.6, y - size * 0.7], [x - d * size * 0.6, y + size * 0.7]];
    return s("polygon", { points: pts.map((p) => p.join(",")).join(" "), fill: "#222" });
  }

  // A curse in progress, in words: its card and sequence, who drew it, each seat's answer
  // (hidden answers only as given or not), the claims, who found it and who suffers it.
  function pwCurse(c) {
    const has = (x) => x !== null && x !== undefined;
    const answer = (i) => (c.responses && c.responses[i]) || (c.responded && c.responded[i]
      ? "answered" : "to answer");
    const seats = (c.responded || c.responses || []).map((_, i) => [seatTag(i), ` ${answer(i)} `]);
    const cells = (list) => (list || []).map((x) => Array.isArray(x) ? `(${x.join(", ")})` : x)
      .join(" ");
    return h("div", { class: "kvline curse" }, h("b", { text: "Curse in progress: " }),
      String(c.card), Array.isArray(c.sequence) ? ` (${c.sequence.join(" → ")})` : "",
      has(c.drawer) ? [" · drawn by ", seatTag(c.drawer)] : "",
      seats.length ? [" · answers: ", seats] : "",
      (c.claims || []).length ? [" · claims: ", c.claims.map((cl) =>
        [seatTag(cl.seat), ` ${cells(cl.cells)} `])] : "",
      has(c.finder) ? [" · found by ", seatTag(c.finder)] : "",
      has(c.victim) ? [" · falls on ", seatTag(c.victim)] : "");
  }

  RENDERERS["pharaohs-wall"] = function (st, view) {
    const CW = 76, CH = 58, X0 = 26, Y0 = 10, N = 7;
    const wall = st.wall || [];
    const ev = eventAt(view);
    const inserted = ev && ev.type === "CardInserted" ? ev.data : null;
    const pillarOrder = st.pillar_order || Object.keys(st.pillars || {});
    // under the wall: its column labels (baseline 20 below it), then the pillars' title
    // (baseline 8 above the pillars), clear of each other
    const PW = 98, PY = Y0 + N * CH + 54, PH = 150;
    const width = Math.max(X0 + N * CW + 10, pillarOrder.length * PW + 10);
    const svg = s("svg", { viewBox: `0 0 ${width} ${PY + PH + 6}`, width: width, class: "pw-svg", role: "img",
      "aria-label": "the hieroglyph wall and the pillars" });
    // wall frame
    svg.appendChild(s("rect", { x: X0 - 6, y: Y0 - 6, width: N * CW + 12, height: N * CH + 12, rx: 6, fill: "#c9b38a", stroke: "#8a7350" }));
    for (let c = 0; c < N; c++) {
      svg.appendChild(s("text", { x: X0 + c * CW + CW / 2, y: Y0 + N * CH + 20, "text-anchor": "middle", "font-size": 12, fill: "#6b5b45", text: `col ${c}` }));
      const col = wall[c] || [];
      for (let r = 0; r < N; r++) {
        const x = X0 + c * CW + 2, y = Y0 + (N - 1 - r) * CH + 2, w = CW - 4, hh = CH - 4;
        const id = col[r];
        if (!id) {
          svg.appendChild(s("rect", { x, y, width: w, height: hh, rx: 4, fill: "#e9dfc9", stroke: "#d4c6a6", class: "cell empty" }));
          continue;
        }
        const card = pwCard(id);
        const g = s("g", { class: "cell card", "data-card": id });
        g.appendChild(s("rect", { x, y, width: w, height: hh, rx: 4, fill: PW_COLOUR[card.animal] || "#ddd", stroke: "#5d4b33", "stroke-width": 1 }));
        g.appendChild(s("text", { x: x + w / 2, y: y + 18, "text-anchor": "middle", "font-size": (card.animal || "").length > 6 ? 9.5 : 11.5, "font-weight": 700, fill: "#1d1a15", text: card.animal || id }));
        if (card.animal) {
          g.appendChild(pwArrow(x + w / 2, y + 34, card.facing, 9));
          g.appendChild(s("text", { x: x + w - 5, y: y + hh - 5, "text-anchor": "end", "font-size": 9.5, fill: "#3b3328", text: `${card.facing === "LEFT" ? "L" : "R"}${card.k}` }));
        }
        g.appendChild(s("title", { text: `${id} (${card.facing || ""}) at col ${c}, row ${r}` }));
        svg.appendChild(g);
      }
    }
    for (let r = 0; r < N; r++) {
      svg.appendChild(s("text", { x: X0 - 12, y: Y0 + (N - 1 - r) * CH + CH / 2 + 4, "text-anchor": "middle", "font-size": 11, fill: "#6b5b45", text: r }));
    }
    if (inserted && typeof inserted.column === "number") {
      const x = X0 + inserted.column * CW, y = Y0 + (N - 1 - inserted.row) * CH;
      svg.appendChild(s("rect", { x: x + 1, y: y + 1, width: CW - 2, height: CH - 2, rx: 5, fill: "none", stroke: "#d50000", "stroke-width": 3.5, class: "last-insert" }));
      for (const p of inserted.pairs || []) {
        const cell = p.cell || p;
        if (!Array.isArray(cell)) continue;
        const px = X0 + cell[0] * CW, py = Y0 + (N - 1 - cell[1]) * CH;
        svg.appendChild(s("rect", { x: px + 3, y: py + 3, width: CW - 6, height: CH - 6, rx: 5, fill: "none", stroke: p.facing === "same" ? "#d50000" : "#1e66c8", "stroke-width": 2.5, "stroke-dasharray": "5 3" }));
        svg.appendChild(s("line", { x1: x + CW / 2, y1: y + CH / 2, x2: px + CW / 2, y2: py + CH / 2, stroke: "#d50000", "stroke-width": 2, "stroke-opacity": .6 }));
      }
    }
    // pillars
    svg.appendChild(s("text", { x: 4, y: PY - 8, "font-size": 13, "font-weight": 700, fill: "#2b2620", text: "Pillars" }));
    pillarOrder.forEach((animal, i) => {
      const p = (st.pillars || {})[animal] || {};
      const x = 4 + i * PW, y = PY;
      const g = s("g", { class: "pillar", "data-animal": animal });
      g.appendChild(s("rect", { x, y, width: PW - 8, height: PH, rx: 6, fill: "#f4ecd8", stroke: "#8a7350" }));
      g.appendChild(s("rect", { x, y, width: PW - 8, height: 20, rx: 6, fill: PW_COLOUR[animal] || "#ccc" }));
      g.appendChild(s("text", { x: x + (PW - 8) / 2, y: y + 14, "text-anchor": "middle", "font-size": 11, "font-weight": 700, text: animal }));
      // occupant
      if (p.occupant !== null && p.occupant !== undefined) {
        g.appendChild(s("circle", { cx: x + 16, cy: y + 38, r: 11, fill: seatColour(p.occupant), stroke: "#222" }));
        g.appendChild(s("text", { x: x + 16, y: y + 42, "text-anchor": "middle", "font-size": 11, "font-weight": 700, fill: "#fff", text: p.occupant }));
        g.appendChild(s("text", { x: x + 32, y: y + 42, "font-size": 10, fill: "#333", text: seatName(p.occupant).slice(0, 9) }));
      } else {
        g.appendChild(s("circle", { cx: x + 16, cy: y + 38, r: 11, fill: "none", stroke: "#aaa", "stroke-dasharray": "3 2" }));
        g.appendChild(s("text", { x: x + 32, y: y + 42, "font-size": 10, fill: "#999", text: "free" }));
      }
      // scarabs: 3 slots
      for (let k = 0; k < 3; k++) {
        const filled = k < (p.scarabs || 0);
        g.appendChild(s("ellipse", { cx: x + 18 + k * 24, cy: y + 66, rx: 9, ry: 7, fill: filled ? "#1b5e20" : "none", stroke: filled ? "#0b3d0f" : "#bbb", class: filled ? "scarab" : "scarab-slot" }));
      }
      // sarcophagus stack, front first
      (p.stack || []).forEach((sc, k) => {
        const sy = y + 84 + k * 21;
        g.appendChild(s("rect", { x: x + 6, y: sy, width: PW - 20, height: 18, rx: 3, fill: k === 0 ? "#d9b86c" : "#e8d5a3", stroke: "#8a7350" }));
        g.appendChild(s("text", { x: x + 12, y: sy + 13, "font-size": 11, fill: "#3b2f1a", text: `${sc.eyes} eye${sc.eyes > 1 ? "s" : ""}${sc.value !== undefined ? ` = ${sc.value}` : ""}` }));
      });
      if (!(p.stack || []).length) g.appendChild(s("text", { x: x + 8, y: y + 98, "font-size": 10, fill: "#999", text: "no sarcophagus" }));
      svg.appendChild(g);
    });

    const info = h("div", { class: "kvline" },
      kv("phase", st.phase), " · ", kv("turn", st.turn_number), " · ", kv("scarab supply", st.supply),
      " · piles: ", Object.entries(st.pile_sizes || {}).map(([k, v]) => `${k} ${v}`).join(", "),
      st.variants ? ` · variants: ${Object.entries(st.variants).filter(([, v]) => v).map(([k]) => k).join(", ") || "base"}` : "",
      st.main_top_is_curse ? " · a curse card is on top of the main pile" : "");
    const extras = [];
    if (st.curse) extras.push(pwCurse(st.curse));
    if (st.curses_done && st.curses_done.length) extras.push(h("div", { class: "kvline", text: `Curses resolved: ${st.curses_done.join(", ")}` }));
    if (st.end) extras.push(h("div", { class: "kvline", text: `End phase: order ${(st.end.order || []).map(seatName).join(" → ")}, scarab moves ${JSON.stringify(st.end.moves || [])}` }));
    const players = h("div", { class: "players" }, (st.reserves || []).map((_, i) => playerBox(view, i,
      h("div", { class: "kv" },
        kv("explorers in reserve", st.reserves[i]),
        kv("hand", st.hand_sizes ? st.hand_sizes[i] : "?"),
        kv("sarcophagus points", st.sarcophagus_points ? st.sarcophagus_points[i] : "?"),
        kv("pharaoh", st.pharaohs && st.pharaohs[i] ? st.pharaohs[i] : "hidden")),
      h("div", { class: "kvline" }, "explorers at: ",
        Object.entries(st.pillars || {}).filter(([, p]) => p.occupant === i).map(([a]) => a).join(", ") || "–"),
      st.hands && Array.isArray(st.hands[i]) ? h("div", { class: "chips" }, "hand: ", st.hands[i].map((c) => {
        const card = pwCard(c);
        const chip = h("span", { class: "chip", text: card.animal ? `${card.animal} ${card.facing === "LEFT" ? "◀" : "▶"}${card.k}` : c });
        if (card.animal) chip.style.background = PW_COLOUR[card.animal];
        return chip;
      })) : null,
      h("div", { class: "kvline" }, "sarcophagi: ",
        (st.sarcophagi && st.sarcophagi[i] || []).map((sc) => `${sc.eyes} eye${sc.eyes > 1 ? "s" : ""}${sc.value !== undefined ? ` (${sc.value})` : ""}`).join(", ") || "–"))));
    return h("div", { class: "pw" }, info, ...extras, svg, players);
  };

  // ------------------------------------------------------------------ Scarabya
  const PIECE_COLOUR = {
    F: "#ef9a9a", I: "#90caf9", L: "#a5d6a7", N: "#ffcc80", P: "#ce93d8", T: "#80cbc4",
    U: "#fff59d", V: "#bcaaa4", W: "#f48fb1", X: "#b0bec5", Y: "#c5e1a5", Z: "#9fa8da",
  };
  const lighten = (hex, f) => {
    const n = parseInt(hex.slice(1), 16);
    const ch = (sh) => Math.round(((n >> sh) & 255) + (255 - ((n >> sh) & 255)) * f);
    return `rgb(${ch(16)},${ch(8)},${ch(0)})`;
  };

  const PLACEMENT_OUTLINE = "#000"; // (no seat's colour: see SEAT_COLOURS)
  function scarabyaGrid(rows, camps, opts) {
    const C = opts.cell || 30, M = 16;
    const R = rows.length, W = rows[0] ? rows[0].length : 0;
    const svg = s("svg", { viewBox: `0 0 ${M + W * C + 2} ${M + R * C + 2}`, width: M + W * C + 2, class: "scarabya-site", role: "img", "aria-label": opts.label || "site" });
    const campAt = {};
    for (const camp of camps || []) for (const [r, c] of camp.cells) campAt[`${r},${c}`] = camp;
    const highlight = new Set((opts.highlight || []).map(([r, c]) => `${r},${c}`));
    const uncovered = new Set((opts.uncovered || []).map(([r, c]) => `${r},${c}`));
    for (let c = 0; c < W; c++) svg.appendChild(s("text", { x: M + c * C + C / 2, y: 11, "text-anchor": "middle", "font-size": 9, fill: "#8a7a66", text: c }));
    for (let r = 0; r < R; r++) {
      svg.appendChild(s("text", { x: 7, y: M + r * C + C / 2 + 3, "text-anchor": "middle", "font-size": 9, fill: "#8a7a66", text: r }));
      for (let c = 0; c < W; c++) {
        const ch = rows[r][c];
        const x = M + c * C, y = M + r * C;
        const camp = campAt[`${r},${c}`];
        let fill = "#f3e5c0", cls = "blank";
        if (ch === "R") { fill = "#8d8d8d"; cls = "rock"; }
        else if (/[A-Za-z]/.test(ch) && ch !== "S" && ch !== "R") {
          const letter = ch.toUpperCase();
          fill = opts.bySeat && camp ? lighten(seatColour(camp.seat), 0.45) : (PIECE_COLOUR[letter] || "#ddd");
          cls = "camp";
        }
        svg.appendChild(s("rect", { x, y, width: C, height: C, fill, stroke: "#d8c8a0", "stroke-width": .6, class: `cell ${cls}`, "data-ch": ch }));
        if (ch === "S" || (/[a-z]/.test(ch))) {
          // a scarab (or a camp over one: drawn small in the corner)
          const small = ch !== "S";
          const cx = small ? x + C - 7 : x + C / 2, cy = small ? y + C - 7 : y + C / 2, sc = small ? 0.45 : 1;
          svg.appendChild(s("ellipse", { cx, cy, rx: 7 * sc, ry: 9 * sc, fill: "#2e4a1e", stroke: "#132108", class: "scarab" }));
          svg.appendChild(s("line", { x1: cx, y1: cy - 9 * sc, x2: cx, y2: cy + 9 * sc, stroke: "#9ccc65", "stroke-width": .8 * sc }));
        }
        if (/[1-4]/.test(ch)) {
          svg.appendChild(s("circle", { cx: x + C / 2, cy: y + C / 2, r: C * 0.36, fill: "#f5c518", stroke: "#8a6d00", class: "token" }));
          svg.appendChild(s("text", { x: x + C / 2, y: y + C / 2 + 4, "text-anchor": "middle", "font-size": 12, "font-weight": 800, fill: "#3b2f00", text: ch }));
        }
        if (/[A-Za-z]/.test(ch) && ch !== "S" && ch !== "R") {
          svg.appendChild(s("text", { x: x + C / 2, y: y + C / 2 + 4, "text-anchor": "middle", "font-size": 12, "font-weight": 700, fill: "#222", text: ch.toUpperCase() }));
        }
        // this version's placement: black and dashed, unlike any seat's colour (a duel's camp
        // edges) and unlike a camp's solid edge, inside the cell's edge
        if (highlight.has(`${r},${c}`)) svg.appendChild(s("rect", { x: x + 3, y: y + 3, width: C - 6, height: C - 6, fill: "none", stroke: PLACEMENT_OUTLINE, "stroke-width": 2.5, "stroke-dasharray": "4 2", class: "last-move" }));
        if (uncovered.has(`${r},${c}`)) svg.appendChild(s("circle", { cx: x + C / 2, cy: y + C / 2, r: C * 0.42, fill: "none", stroke: "#d50000", "stroke-width": 2 }));
      }
    }
    // camp outlines: a thick edge wherever a camp cell touches something else
    const key = (r, c) => { const k = campAt[`${r},${c}`]; return k ? `${k.seat}/${k.round}/${k.piece}` : null; };
    for (const camp of camps || []) {
      const me = `${camp.seat}/${camp.round}/${camp.piece}`;
      const stroke = opts.bySeat ? seatColour(camp.seat) : "#4e3b22";
      for (const [r, c] of camp.cells) {
        const x = M + c * C, y = M + r * C;
        const edges = [[r - 1, c, x, y, x + C, y], [r + 1, c, x, y + C, x + C, y + C], [r, c - 1, x, y, x, y + C], [r, c + 1, x + C, y, x + C, y + C]];
        for (const [nr, nc, x1, y1, x2, y2] of edges) {
          if (key(nr, nc) !== me) svg.appendChild(s("line", { x1, y1, x2, y2, stroke, "stroke-width": 2.2, "stroke-linecap": "round" }));
        }
      }
    }
    return svg;
  }

  RENDERERS["scarabya"] = function (st, view) {
    const ev = eventAt(view);
    const duel = st.mode === "duel";
    const seats = st.seats || [];
    const head = h("div", { class: "kvline" },
      kv("mode", st.mode), " · ", kv("round", `${st.round} / ${st.rounds}`), " · ", kv("phase", st.phase),
      " · mission piece ", h("b", { text: st.piece || "–" }), " · missions left ", h("b", { text: st.missions_left }),
      " · revealed ", h("span", { class: "mono", text: (st.revealed || []).join(" ") }),
      duel ? [" · ", kv("duel game", `${st.game} / ${st.duel_games}`), " · ", kv("match", (st.match_scores || []).join(" : "))] : null);
    const highlightFor = (siteIndex) => {
      if (!ev || !ev.data) return [];
      if (Array.isArray(ev.data.cells) && (duel || ev.data.seat === undefined || ev.data.seat === siteIndex)) return ev.data.cells;
      if (Array.isArray(ev.data.placements)) return ev.data.placements[siteIndex] || [];
      if (Array.isArray(ev.data.regions) && (duel || ev.data.seat === siteIndex)) {
        return ev.data.regions.flatMap((r) => (Array.isArray(r.cells) ? r.cells : []));
      }
      return [];
    };
    const sites = h("div", { class: "row" }, (st.sites || []).map((site, i) => {
      const seat = site.seat !== undefined ? site.seat : null;
      const title = duel ? "shared site" : seat !== null ? `site of ${seatName(seat)}` : `site ${i}`;
      const score = seat !== null && st.scores ? st.scores[seat] : null;
      const seatInfo = seat !== null ? seats.find((x) => x.seat === seat) : null;
      return h("figure", { class: "site", "data-site": i, style: "margin:0" },
        h("figcaption", {}, seat !== null ? seatTag(seat, seat) : null, " ", h("b", { text: title }),
          score !== null && score !== undefined ? ` · score ${score}` : "",
          seatInfo ? h("span", { class: "muted", text: ` · ${seatInfo.status}` }) : null,
          site.discarded && site.discarded.length ? ` · discarded ${site.discarded.join(" ")}` : ""),
        scarabyaGrid(site.rows || st.layout || [], site.camps, { cell: (st.sites || []).length > 1 ? 25 : 30, bySeat: duel, highlight: highlightFor(i), uncovered: st.mode === "solo" ? st.uncovered : null, label: title }));
    }));
    const parts = [head, sites];
    if (duel) {
      parts.push(h("div", { class: "kvline" }, "colours: ", seats.map((x) => [seatTag(x.seat), ` ${x.score} pts (${x.status}) `]),
        st.active_seat !== null && st.active_seat !== undefined ? ["· to place: ", seatTag(st.active_seat)] : ""));
      const done = (st.games || []);
      if (done.length) {
        parts.push(h("h4", { text: "Finished duel games" }));
        parts.push(h("div", { class: "row" }, done.map((g) => h("figure", { style: "margin:0" },
          h("figcaption", { text: `game ${g.game} · starter ${seatName(g.starter)} · scores ${(g.scores || []).join(" : ")}` }),
          scarabyaGrid(g.rows || [], g.camps, { bySeat: true, cell: 18, label: `game ${g.game}` })))));
      }
    } else if (st.mode === "solo") {
      parts.push(h("div", { class: "kvline" }, kv("scarabs covered", st.covered), " · ", kv("uncovered", (st.uncovered || []).length),
        " (circled in red)", st.result && st.result.details ? ` · ${st.result.details.won ? "won" : "lost"}` : ""));
    } else {
      parts.push(h("div", { class: "players" }, seats.map((x) => playerBox(view, x.seat,
        h("div", { class: "kv" }, kv("score", x.score), kv("status", x.status))))));
    }
    parts.push(h("div", { class: "kvline muted", text: "sand: empty · dark beetle: scarab · grey: rock · coloured letter: camp (small beetle: camp over a scarab) · gold disc: scarab with its token value · black dashed outline: this version's placement" }));
    return h("div", { class: "scarabya" }, ...parts);
  };

  // ------------------------------------------------------------------ Tides of Time
  // number -> {id, name, suit, objective} (the rules' card table, from the game module)
  const ttInfo = (n) => (tables("tides-of-time").cards || {})[n];
  function ttCard(n, opts) {
    const info = ttInfo(n);
    const c = info ? [info.id, info.name, info.suit, info.objective] : [String(n), `card ${n}`, null, ""];
    const o = opts || {};
    return h("div", { class: `tcard suit-${c[2] || "none"}${o.relic ? " relic" : ""}`, "data-card": n, title: `${c[1]} (${c[2] || "no suit"}): ${c[3]}` },
      h("span", { class: "num", text: `${n} ${c[2] ? c[2] : "—"}` }),
      o.points !== undefined ? h("span", { class: "pts", text: `+${o.points}` }) : null,
      h("span", { class: "nm", text: c[1] }),
      h("span", { class: "obj", text: o.relic ? `relic · ${c[3]}` : c[3] }));
  }
  const ttBack = (label) => h("div", { class: "tcard back" }, h("span", { class: "nm", text: label || "hidden" }));

  RENDERERS["tides-of-time"] = function (st, view) {
    const seats = st.seats || [];
    const rounds = st.rounds || [];
    const head = h("div", { class: "kvline" },
      kv("round", `${st.round} / 3`), " · ", kv("phase", st.phase), " · ", kv("pick", st.pick === null ? "–" : st.pick),
      " · ", kv("draw pile", st.draw_pile_size),
      st.strict_zero_ties ? " · strict zero ties" : "");
    const parts = [head];
    // the latest scored round gives per-card points, shown on the kingdom cards when they match
    const scored = rounds.length ? rounds[rounds.length - 1] : null;
    seats.forEach((x, i) => {
      const relics = new Set(x.relics || []);
      const pointsFor = {};
      if (scored && scored.per_card && scored.per_card[i]) for (const pc of scored.per_card[i]) pointsFor[pc.card] = pc.points;
      const played = new Set(x.played_this_round || []);
      const hand = Array.isArray(x.hand) ? x.hand.map((n) => ttCard(n)) :
        Array.from({ length: x.hand_size || 0 }, () => ttBack("hidden card"));
      parts.push(playerBox(view, x.seat,
        h("div", { class: "kv" }, kv("total", x.total), kv("round scores", (x.round_scores || []).join(" + ") || "–"),
          x.committed ? h("span", { text: "✓ committed" }) : null,
          x.pending ? h("span", { text: `choosing relic: ${JSON.stringify(x.pending)}` }) : null),
        h("div", { class: "kvline", text: "Kingdom (purple ring: relic kept from an earlier round):" }),
        h("div", { class: "kingdom" }, (x.kingdom || []).map((n) => ttCard(n, { relic: relics.has(n) && !played.has(n), points: pointsFor[n] }))),
        h("div", { class: "kvline", text: Array.isArray(x.hand) ? `Hand (${x.hand.length}):` : `Hand: ${x.hand_size || 0} hidden` }),
        h("div", { class: "hand" }, hand)));
    });
    if ((st.removed || []).length) {
      parts.push(h("h4", { text: "Removed from the game" }), h("div", {}, st.removed.map((n) => ttCard(n))));
    }
    if (rounds.length) {
      parts.push(h("h4", { text: "Scores per round" }));
      parts.push(h("table", { class: "small scores" },
        h("thead", {}, h("tr", {}, h("th", { text: "player" }), rounds.map((r) => h("th", { text: `round ${r.round}` })), h("th", { text: "total" }))),
        h("tbody", {}, seats.map((x, i) => h("tr", {}, h("td", {}, seatTag(i)),
          rounds.map((r) => h("td", { title: (r.per_card && r.per_card[i] || []).map((pc) => `${pc.id} ${pc.points}`).join(", "), text: r.totals ? r.totals[i] : "" })),
          h("td", {}, h("b", { text: x.total })))))));
      for (const r of rounds) {
        parts.push(h("details", {}, h("summary", { text: `round ${r.round}: card by card` }),
          seats.map((x, i) => h("div", { class: "kvline" }, seatTag(i), " ",
            (r.per_card && r.per_card[i] || []).map((pc) => `${(ttInfo(pc.card) || { name: pc.id }).name} ${pc.points}`).join(" · "),
            r.counts && r.counts[i] ? h("span", { class: "muted", text: `  (suits: ${Object.entries(r.counts[i]).map(([k, v]) => `${k} ${v}`).join(", ")})` }) : null))));
      }
    }
    return h("div", { class: "tides" }, ...parts);
  };

  // ------------------------------------------------------------------ Diamant
  function diamantCard(id, fatal) {
    let m;
    if ((m = /^T(\d+)[a-z]?$/.exec(id))) {
      return h("div", { class: "dcard treasure", "data-card": id, title: `treasure ${m[1]} rubies` }, h("span", { class: "big", text: m[1] }), h("span", { class: "lbl", text: "rubies" }));
    }
    if ((m = /^R(\d)$/.exec(id))) {
      return h("div", { class: "dcard relic", "data-card": id, title: "relic" }, h("span", { class: "big", text: "♜" }), h("span", { class: "lbl", text: "relic" }));
    }
    m = /^([A-Z]+)(\d)$/.exec(id);
    return h("div", { class: `dcard trap${fatal ? " fatal" : ""}`, "data-card": id, title: `trap ${id}` },
      h("span", { class: "big", text: "⚠" }), h("span", { class: "lbl", text: m ? m[1].toLowerCase() : id }));
  }

  RENDERERS["diamant"] = function (st, view) {
    const path = st.path || [];
    const trapKinds = {};
    const trapKind = (c) => { const m = /^([A-Z]{2,})\d$/.exec(c); return m ? m[1] : null; };
    for (const c of path) { const k = trapKind(c); if (k) trapKinds[k] = (trapKinds[k] || 0) + 1; }
    const players = st.players || [];
    const pawn = (p) => h("span", { class: "pawn", title: seatName(p.seat), text: p.seat,
                                    style: `background:${seatColour(p.seat)};` +
                                           `color:${seatInk(p.seat)}` });
    const inCave = players.filter((p) => p.in_cave), atCamp = players.filter((p) => !p.in_cave);
    const cave = h("div", { class: "cave" },
      h("span", { class: "entrance", text: "entrance ▸" }),
      path.length ? path.map((c) => diamantCard(c, trapKind(c) !== null && trapKinds[trapKind(c)] > 1)) : h("span", { class: "muted", style: "color:#d7ccc8", text: "(no card on the path)" }),
      inCave.length ? h("span", { class: "entrance", style: "margin-left:.6rem" }, "explorers: ", inCave.map(pawn)) : null);
    const head = h("div", { class: "kvline" },
      kv("round", `${st.round} / 5`), " · ", kv("phase", st.phase), " · ", kv("deck", st.deck_size),
      " · ", kv("rubies left on the path", st.path_rubies), " · ", kv("relics brought back", st.relics_brought_back),
      Object.keys(st.traps_on_path || {}).length ? ` · traps on path: ${Object.entries(st.traps_on_path).map(([k, v]) => `${k}×${v}`).join(", ")}` : "",
      (st.removed || []).length ? ` · removed: ${st.removed.join(", ")}` : "");
    const camp = h("div", { class: "kvline" }, h("b", { text: "At camp: " }), atCamp.length ? atCamp.map(pawn) : h("span", { class: "muted", text: "nobody" }));
    const boxes = h("div", { class: "players" }, players.map((p) => playerBox(view, p.seat,
      h("div", { class: "kv" },
        h("span", {}, h("b", { text: p.in_cave ? "in the cave" : "at camp" })),
        kv("pocket", p.pocket), kv("chest", p.chest === null ? "hidden" : p.chest), kv("relics", p.relics),
        p.committed ? h("span", { text: `✓ decided${p.choice ? `: ${p.choice}` : ""}` }) : null,
        !p.committed && p.choice ? kv("chose", p.choice) : null))));
    return h("div", { class: "diamant" }, head, cave, camp, boxes);
  };

  // ------------------------------------------------------------------ Papyrus
  const NILE_COLOUR = { light: "#f4d03f", darkness: "#34495e", nature: "#27ae60", water: "#2e86c1", eye: "#a569bd" };
  const counts = (obj, opts) => h("div", { class: "chips" }, Object.entries(obj || {}).filter(([, n]) => !(opts && opts.hideZero) || n)
    .map(([k, n]) => h("span", { class: `chip${n ? "" : " zero"}` }, `${k} `, h("b", { text: n }))));

  function papyrusMap(board, st, view) {
    const nodes = {};
    for (const n of board.nodes || []) nodes[n.id] = n;
    const xs = (board.nodes || []).map((n) => n.x), ys = (board.nodes || []).map((n) => n.y);
    const minX = Math.min(...xs) - 60, maxX = Math.max(...xs) + 60, minY = Math.min(...ys) - 40, maxY = Math.max(...ys) + 50;
    const svg = s("svg", { viewBox: `${minX} ${minY} ${maxX - minX} ${maxY - minY}`, width: 680, class: "papyrus-map", role: "img", "aria-label": board.name || "map" });
    svg.appendChild(s("rect", { x: minX, y: minY, width: maxX - minX, height: maxY - minY, fill: "#f2e6c9" }));
    const ev = eventAt(view);
    const movedPath = ev && ev.type === "PawnMoved" ? ev.data.path : null;
    for (const p of board.paths || []) {
      const a = nodes[p.a], b = nodes[p.b];
      if (!a || !b) continue;
      const moved = p.id === movedPath;
      svg.appendChild(s("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, stroke: moved ? "#d50000" : "#a08b62", "stroke-width": moved ? 7 : 3, class: "path", "data-path": p.id }));
      const squares = [];
      for (const [colour, n] of Object.entries(p.squares || {})) for (let k = 0; k < n; k++) squares.push(colour);
      squares.forEach((colour, k) => {
        const t = (k + 1) / (squares.length + 1);
        const cx = a.x + (b.x - a.x) * t, cy = a.y + (b.y - a.y) * t, S = 13;
        const ang = Math.atan2(b.y - a.y, b.x - a.x) * 180 / Math.PI;
        svg.appendChild(s("rect", { x: cx - S / 2, y: cy - S / 2, width: S, height: S, fill: NILE_COLOUR[colour] || "#ccc", stroke: "#3b2f1a", "stroke-width": 1, transform: `rotate(${ang} ${cx} ${cy})` },
          s("title", { text: `${p.id}: ${colour}` })));
      });
    }
    const owners = st.owners || {};
    for (const n of board.nodes || []) {
      const g = s("g", { class: `node ${n.kind}`, "data-node": n.id });
      const owner = n.god !== undefined ? owners[n.god] : undefined;
      const fill = owner !== undefined ? seatColour(owner) : n.kind === "start" ? "#f5c518" : n.kind === "event" ? "#d6eaf8" : "#e8d5a3";
      if (n.kind === "pyramid") {
        g.appendChild(s("polygon", { points: `${n.x},${n.y - 20} ${n.x - 20},${n.y + 14} ${n.x + 20},${n.y + 14}`, fill, stroke: "#5d4b33", "stroke-width": 2 }));
      } else if (n.kind === "event") {
        g.appendChild(s("polygon", { points: `${n.x},${n.y - 17} ${n.x + 17},${n.y} ${n.x},${n.y + 17} ${n.x - 17},${n.y}`, fill, stroke: "#1f618d", "stroke-width": 2 }));
      } else {
        g.appendChild(s("circle", { cx: n.x, cy: n.y, r: 22, fill, stroke: "#8a6d00", "stroke-width": 3 }));
      }
      const label = (n.name || n.id).replace(/^Pyramid of /, "");
      g.appendChild(s("text", { x: n.x, y: n.y + 32, "text-anchor": "middle", "font-size": 15, fill: "#2b2620", "font-weight": owner !== undefined ? 700 : 400, text: label }));
      g.appendChild(s("title", { text: `${n.name || n.id}${owner !== undefined ? ` — conquered by ${seatName(owner)}` : ""}` }));
      svg.appendChild(g);
    }
    // pawns
    const at = {};
    (st.seats || []).forEach((x) => { if (x.pawn) (at[x.pawn] = at[x.pawn] || []).push(x.seat); });
    for (const [nodeId, list] of Object.entries(at)) {
      const n = nodes[nodeId];
      if (!n) continue;
      list.forEach((seat, k) => {
        const cx = n.x + 24 + k * 16, cy = n.y - 18;
        svg.appendChild(s("g", { class: "pawn", "data-seat": seat },
          s("circle", { cx, cy, r: 11, fill: seatColour(seat), stroke: "#111", "stroke-width": 2 }),
          s("text", { x: cx, y: cy + 5, "text-anchor": "middle", "font-size": 14,
                      "font-weight": 800, fill: seatInk(seat), text: seat }),
          s("title", { text: `${seatName(seat)} at ${n.name || n.id}` })));
      });
    }
    return svg;
  }

  RENDERERS["papyrus"] = function (st, view) {
    const head = h("div", { class: "kvline" },
      kv("variant", st.variant), " · ", kv("phase", st.phase), " · ", kv("round", st.round), " · ",
      kv("turns", `${st.turns_played}${st.turn_limit ? ` / ${st.turn_limit}` : ""}`),
      st.current !== null && st.current !== undefined ? [" · current ", seatTag(st.current)] : "",
      st.final_round ? " · final round" : "", st.end_reason ? ` · ended: ${st.end_reason}` : "");
    const decks = h("div", { class: "kvline" },
      kv("bag", st.bag_count), " · ", kv("god deck", st.god_deck_count), st.movement_deck_count !== undefined ? [" · ", kv("movement deck", st.movement_deck_count)] : "",
      st.event_deck_count !== undefined ? [" · ", kv("event deck", st.event_deck_count)] : "",
      st.event_card ? [" · event card: ", h("b", { text: typeof st.event_card === "object" ? JSON.stringify(st.event_card) : st.event_card })] : "",
      st.pending ? [" · pending: ", h("span", { class: "mono", text: JSON.stringify(st.pending) })] : "");
    const parts = [head, decks];
    if (st.board && Array.isArray(st.board.nodes) && st.board.nodes.length) {
      const hasXY = st.board.nodes.every((n) => typeof n.x === "number" && typeof n.y === "number");
      if (hasXY) {
        parts.push(h("div", { class: "kvline" }, h("b", { text: st.board.name || "The Nile" }), " — squares: ",
          Object.entries(NILE_COLOUR).filter(([k]) => k !== "eye").map(([k, c]) => { const e = h("span", { class: "chip", text: k }); e.style.background = c; e.style.color = k === "darkness" || k === "water" ? "#fff" : "#222"; return [e, " "]; }),
          " · triangles: pyramids (seat colour once conquered) · diamonds: event sites · red: this version's move"));
        parts.push(papyrusMap(st.board, st, view));
      } else {
        parts.push(h("h4", { text: st.board.name || "Map" }), h("ul", {}, (st.board.paths || []).map((p) =>
          h("li", { text: `${p.a} — ${p.b}: ${Object.entries(p.squares || {}).map(([k, v]) => `${k}×${v}`).join(", ")}` }))));
      }
    }
    // (the solo variant has no market: no heading over nothing)
    if (st.market) parts.push(h("h4", { text: "Market" }), counts(st.market));
    parts.push(h("div", { class: "players" }, (st.seats || []).map((x) => playerBox(view, x.seat,
      h("div", { class: "kv" }, kv("score", x.score), kv("scarabs", x.scarabs), kv("sons of Horus", x.sons_of_horus),
        x.pawn ? kv("at", x.pawn) : null, x.paid !== undefined ? kv("paid", x.paid) : null,
        x.skip_next_turn ? h("span", { text: "skips next turn" }) : null),
      h("div", { class: "kvline" }, "conquered: ", (x.conquered || []).join(", ") || "–"),
      h("div", { class: "kvline" }, "gods: ", Array.isArray(x.gods) ? x.gods.join(", ") : `${x.gods_count} hidden`),
      x.movement ? [h("div", { class: "kvline", text: "movement cards:" }), counts(x.movement, { hideZero: false })] :
        x.movement_count !== undefined ? h("div", { class: "kvline", text: `movement cards: ${x.movement_count} hidden` }) : null,
      x.holder ? [h("div", { class: "kvline", text: `holder (${x.holder_count}):` }), counts(x.holder, { hideZero: true })] :
        h("div", { class: "kvline", text: `holder: ${x.holder_count} glyphs hidden` })))));
    return h("div", { class: "papyrus" }, ...parts);
  };

  // ------------------------------------------------------------------ following a live game
  const KNOWN_EVENT_NAMES = ["message", "event", "game_event", "end", "game_end", "finished", "GameEnded", "GameAborted"];

  function setLive(text) {
    const live = $("#live");
    live.hidden = !text;
    $("#live-text").textContent = text || "";
  }

  // A browser gives one host six HTTP/1.1 connections, and each open event stream holds one:
  // with enough viewer tabs following live games, this page's own requests wait in the
  // browser's queue behind the streams. When a request has waited STALL_MS (or the stream has
  // not opened in that time), the page lets its stream go and polls instead, trying the
  // stream again after STREAM_RETRY_MS, doubled on each further stall (up to
  // STREAM_RETRY_MAX_MS). A hidden tab holds no stream at all (see onVisibility).
  const STALL_MS = 3000;
  const STREAM_RETRY_MS = 20000, STREAM_RETRY_MAX_MS = 160000;

  function startLive() {
    stopLive();
    const id = app.id;
    const live = { es: null, poll: null, safety: null, listened: new Set(), timer: null,
                   watchdog: null, retry: null };
    app.live = live;
    // shown at once: the page follows the game from now on, whichever way it gets the news
    setLive("live (connecting)");
    const startPolling = () => {
      if (app.live !== live || live.poll) return;
      setLive("live (polling)");
      live.poll = setInterval(refreshHead, 1000);
      refreshHead();
    };
    const closeStream = () => {
      if (live.es) live.es.close();
      live.es = null;
      if (live.safety) { clearInterval(live.safety); live.safety = null; }
      if (live.watchdog) { clearInterval(live.watchdog); live.watchdog = null; }
    };
    if (!("EventSource" in window)) { startPolling(); return; }
    let opened = false;
    let es;
    try {
      // ?after= skips the history this page already has; reconnects send Last-Event-ID themselves
      es = new EventSource(`/v1/games/${encodeURIComponent(id)}/events/stream?after=${app.head ? app.head.version : 0}`);
    } catch (e) { startPolling(); return; }
    live.es = es;
    const since = Date.now();
    live.watchdog = setInterval(() => {
      if (app.live !== live || !live.es) return;
      let oldest = opened ? Infinity : since;
      for (const req of inflight) oldest = Math.min(oldest, req.at);
      if (Date.now() - oldest < STALL_MS) return;
      // requests stall behind the streams: free this page's connection and poll for a while
      closeStream();
      const stalls = app.streamStalls = (app.streamStalls || 0) + 1;
      const wait = Math.min(STREAM_RETRY_MAX_MS, STREAM_RETRY_MS * 2 ** (stalls - 1));
      live.retry = setTimeout(() => { if (app.live === live) startLive(); },
                              wait * (0.75 + Math.random() / 2));
      startPolling();
    }, 500);
    const onEvent = () => {
      if (app.live !== live) return;
      clearTimeout(live.timer);
      live.timer = setTimeout(refreshHead, 100); // coalesce a command's burst of events
    };
    live.listen = (name) => {
      if (live.listened.has(name)) return;
      live.listened.add(name);
      es.addEventListener(name, onEvent);
    };
    for (const n of KNOWN_EVENT_NAMES) live.listen(n);
    for (const ev of app.events) if (ev) live.listen(ev.type);
    es.onopen = () => {
      if (app.live !== live) return;
      opened = true;
      setLive("live (stream)");
      // a slow safety net for event names this page does not know yet
      if (!live.safety) live.safety = setInterval(refreshHead, 5000);
      refreshHead();
    };
    es.onerror = () => {
      if (app.live !== live || live.es !== es) return;
      if (!opened || es.readyState === EventSource.CLOSED) {
        // no stream endpoint (or it refused us): fall back to polling
        closeStream();
        startPolling();
      } else {
        setLive("live (reconnecting)"); // the browser resumes with Last-Event-ID by itself
      }
    };
  }

  function stopLive() {
    const live = app.live;
    app.live = null;
    if (!live) { setLive(null); return; }
    if (live.es) live.es.close();
    if (live.poll) clearInterval(live.poll);
    if (live.safety) clearInterval(live.safety);
    if (live.watchdog) clearInterval(live.watchdog);
    clearTimeout(live.retry);
    clearTimeout(live.timer);
    setLive(null);
  }

  // A hidden tab lets its stream (or polling) go; shown again, it catches up and follows on
  // (the new stream starts after the version this page has).
  function onVisibility() {
    if (document.visibilityState === "hidden") {
      if (app.live) { stopLive(); app.paused = true; setLive("live (paused)"); }
    } else if (app.paused) {
      app.paused = false;
      setLive(null);
      if (app.id && app.head) follow();
    }
  }

  // Follows the open game the way its state calls for (nothing once it is over and public).
  function follow() {
    if (isWithheld(app.head)) followWithheld();
    else if (!OVER.has(app.head.status)) startLive();
  }

  // A withheld rotation is asked for again every WITHHELD_POLL_MS; refreshHead draws its end
  // once the API serves it.
  const WITHHELD_POLL_MS = 3000;
  function followWithheld() {
    stopLive();
    app.live = { poll: setInterval(refreshHead, WITHHELD_POLL_MS) };
    setLive("ended · withheld until the deal ends");
  }

  async function refreshHead() {
    if (!app.id || app.refreshing) return;
    const id = app.id;
    app.refreshing = true;
    try {
      const head = await api(`/v1/games/${encodeURIComponent(id)}`);
      if (id !== app.id) return;
      // the server answers again: an earlier failure's message goes
      const err = $("#game-error");
      if (err.dataset.live) { err.hidden = true; delete err.dataset.live; }
      const old = app.head;
      const grew = head.version > old.version, moved = head.status !== old.status;
      const revealed = isWithheld(old) && !isWithheld(head);
      if (!grew && !moved && !revealed) return;
      // (waiting -> active goes on live)
      const ended = (moved && OVER.has(head.status)) || revealed;
      const wasAtHead = app.version === old.version;
      app.head = head;
      if (ended) {
        // once the game is over every event and every past state is public: reload them
        stopLive();
        app.events = []; app.states = new Map(); app.statesGen++;
        await fetchEvents(0);
      } else {
        await fetchEvents(old.version);
        if (app.live && app.live.listen) for (const ev of app.events) if (ev) app.live.listen(ev.type);
      }
      if (id !== app.id) return;
      cacheState(head.version, head);
      renderHeader();
      renderLog();
      const last = app.events[head.version];
      announce(`${typeName(head.type)}: version ${head.version}` +
               (last ? `, ${last.type}` : "") + (moved ? `, game ${head.status}` : ""));
      const following = $("#follow").checked;
      show(following && wasAtHead ? head.version : app.version);
      if (ended && isWithheld(head)) followWithheld();
      const row = document.querySelector(`#games tbody tr[data-id="${CSS.escape(id)}"]`);
      if (row) {
        const cell = (name) => row.querySelector(`td.${name}`);
        cell("status").textContent = head.status; cell("status").className = `status st-${head.status}`;
        cell("version").textContent = head.version;
        if (cell("seats").dataset.open !== undefined) {
          cell("seats").textContent = seatsSummary(head.players);
          cell("seats").dataset.open = head.players.filter((p) => p.controller === "open").length;
        }
      }
    } catch (e) {
      if (id === app.id) {
        const el = $("#game-error");
        el.hidden = false; el.dataset.live = "1";
        el.textContent = `Live update failed: ${e.message}`;
      }
    } finally {
      app.refreshing = false;
    }
  }

  // ------------------------------------------------------------------ wiring
  const SLIDER_SETTLE_MS = 150;
  function isTyping(el) {
    if (!el) return false;
    const tag = el.tagName;
    return (tag === "INPUT" && el.type !== "range" && el.type !== "checkbox") || tag === "SELECT" || tag === "TEXTAREA" || el.isContentEditable;
  }

  function init() {
    $("#f-type").addEventListener("change", () => { app.list.page = 1; loadList(); });
    $("#f-status").addEventListener("change", () => { app.list.page = 1; loadList(); });
    $("#f-refresh").addEventListener("click", () => { loadList(); loadTournaments(); });
    $("#prev-page").addEventListener("click", () => { app.list.page = Math.max(1, app.list.page - 1); loadList(); });
    $("#next-page").addEventListener("click", () => { app.list.page += 1; loadList(); });
    const slider = $("#slider");
    // A drag fires "input" at every position it passes: only the position it rests on (for
    // SLIDER_SETTLE_MS, or where it is let go: "change") is fetched and drawn.
    slider.addEventListener("input", () => {
      clearTimeout(app.sliderTimer);
      if (app.head) $("#version-label").textContent = `v ${slider.value} / ${app.head.version}`;
      app.sliderTimer = setTimeout(() => show(Number(slider.value)), SLIDER_SETTLE_MS);
    });
    slider.addEventListener("change", () => {
      clearTimeout(app.sliderTimer);
      if (Number(slider.value) !== app.version) show(Number(slider.value));
    });
    $("#btn-first").addEventListener("click", () => show(1));
    $("#btn-prev").addEventListener("click", () => show(app.version - 1));
    $("#btn-next").addEventListener("click", () => show(app.version + 1));
    $("#btn-last").addEventListener("click", () => show(app.head ? app.head.version : 1));
    document.addEventListener("keydown", (e) => {
      if (!app.head || e.altKey || e.ctrlKey || e.metaKey || isTyping(e.target)) return;
      if (e.target === slider && ["ArrowLeft", "ArrowRight", "Home", "End", "ArrowUp",
                                  "ArrowDown"].includes(e.key)) {
        return; // the range input moves itself and fires "input" (PageUp/PageDown: below)
      }
      const step = { ArrowLeft: -1, ArrowRight: 1, PageUp: -10, PageDown: 10 }[e.key];
      if (step) { show(app.version + step); e.preventDefault(); }
      else if (e.key === "Home") { show(1); e.preventDefault(); }
      else if (e.key === "End") { show(app.head.version); e.preventDefault(); }
    });
    $("#log").addEventListener("keydown", onLogKey);
    window.addEventListener("popstate", () => routeFromUrl());
    document.addEventListener("visibilitychange", onVisibility);
    api("/viewer/games.json").then((body) => { GAME_DATA = (body && body.types) || {}; })
      .catch(() => { GAME_DATA = {}; })
      .then(() => { typeFilter(); loadList(); loadTournaments(); routeFromUrl(); });
  }

  // A version in the address: its leading decimal digits ("1.5" is 1); none, or below 1, is
  // none (the head).
  function versionParam(text) {
    const n = parseInt(text || "", 10);
    return n >= 1 ? n : null;
  }

  function routeFromUrl() {
    const params = new URLSearchParams(location.search);
    const tournament = params.get("tournament");
    if (tournament && !params.get("game")) {
      if (tournament !== app.tournament || $("#tournament-pane").hidden) openTournament(tournament);
      return;
    }
    let id = params.get("game"), v = versionParam(params.get("v"));
    if (!id && location.hash.length > 1) {
      const m = /^#\/?(?:games\/)?([^/]+)(?:\/(\d+))?$/.exec(location.hash);
      if (m) { id = decodeURIComponent(m[1]); v = versionParam(m[2]); }
    }
    if (!id) closeAll();
    else if (id !== app.id) openGame(id, v);
    else if (app.head) show(v || app.head.version); // the same game: the version
  }

  // exposed for tests and the console
  window.cartoucheViewer = { openGame, openTournament, show, state: app };

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
