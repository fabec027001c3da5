/* GroundTalk seat client: one websocket per seat, lossless and exactly-once on the screen.
 *
 * - join with the last seq this tab saw (kept in sessionStorage per seat), so a reload or a
 *   reconnect gets exactly the events it missed plus the current view;
 * - events are applied in seq order; a duplicate (seq <= last) is ignored, a gap asks to resume;
 * - every action carries a client id and stays pending (in sessionStorage) until acknowledged;
 *   pending actions are re-sent after a reconnect and the server answers repeats without
 *   applying them twice; an error marked ``retryable`` (the server could not confirm the action)
 *   keeps it pending and re-sends it with the same id after a backoff.
 *
 * In a third-party frame (MTurk's) a browser that blocks third-party storage throws on any use
 * of sessionStorage; the client then keeps seq and pending actions in memory (a reload there
 * starts from the server's snapshot, and actions not yet acknowledged are sent again only
 * while the page lives).
 */
(function () {
  "use strict";

  const tabStore = (function () {
    try {
      const s = window.sessionStorage;
      s.setItem("gt:probe", "1");
      s.removeItem("gt:probe");
      return s;
    } catch (e) {
      const memory = new Map();
      return { getItem: (k) => (memory.has(k) ? memory.get(k) : null), setItem: (k, v) => memory.set(k, String(v)) };
    }
  })();

  function uid() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    return "a" + Date.now().toString(36) + Math.random().toString(36).slice(2);
  }

  class SeatClient {
    constructor({ wsPath, token, onView, onEvent, onError, onStatus, onAck, onPresence }) {
      this.wsPath = wsPath;
      this.token = token;
      this.onView = onView || (() => {});
      this.onEvent = onEvent || (() => {});
      this.onError = onError || (() => {});
      this.onStatus = onStatus || (() => {});
      this.onAck = onAck || (() => {});
      this.onPresence = onPresence || (() => {});
      this.key = "gt:" + token.slice(0, 12);
      this.lastSeq = Number(tabStore.getItem(this.key + ":seq") || -1);
      if (this.lastSeq < 0) this.lastSeq = null;
      this.pending = JSON.parse(tabStore.getItem(this.key + ":pending") || "[]");
      this.backoff = 500;
      this.joined = false;
      this.closedByUs = false;
      this.connect();
    }

    url() {
      const proto = location.protocol === "https:" ? "wss:" : "ws:";
      return proto + "//" + location.host + this.wsPath;
    }

    connect() {
      this.onStatus("connecting");
      const ws = new WebSocket(this.url());
      this.ws = ws;
      ws.onopen = () => {
        this.backoff = 500;
        ws.send(JSON.stringify({ type: "join", token: this.token, last_seq: this.lastSeq }));
      };
      ws.onmessage = (msg) => this.receive(JSON.parse(msg.data));
      ws.onclose = () => {
        this.joined = false;
        if (this.closedByUs) return;
        this.onStatus("reconnecting");
        setTimeout(() => this.connect(), this.backoff);
        this.backoff = Math.min(this.backoff * 2, 8000);
      };
    }

    saveSeq(seq) {
      this.lastSeq = seq;
      tabStore.setItem(this.key + ":seq", String(seq));
    }

    savePending() {
      tabStore.setItem(this.key + ":pending", JSON.stringify(this.pending));
    }

    receive(msg) {
      if (msg.type === "joined") {
        this.joined = true;
        this.onStatus("connected");
        if (msg.reset) this.onView(msg.view, msg, true);
        for (const ev of msg.events || []) this.applyEvent(ev);
        this.saveSeq(msg.seq);
        this.onView(msg.view, msg, false);
        for (const p of this.pending) this.ws.send(JSON.stringify({ type: "action", id: p.id, action: p.action }));
      } else if (msg.type === "events") {
        const fresh = msg.events.filter((e) => this.lastSeq === null || e.seq > this.lastSeq);
        if (!fresh.length) return;
        if (this.lastSeq !== null && fresh[0].seq !== this.lastSeq + 1) {
          this.ws.send(JSON.stringify({ type: "resume", last_seq: this.lastSeq }));
          return;
        }
        for (const ev of fresh) this.applyEvent(ev);
        this.saveSeq(msg.seq);
        if (msg.view) this.onView(msg.view, msg, false);
      } else if (msg.type === "presence") {
        this.onPresence(msg);
      } else if (msg.type === "typing") {
        typing.show(msg);
      } else if (msg.type === "ack") {
        this.pending = this.pending.filter((p) => p.id !== msg.id);
        this.savePending();
        if (this.retrying && !this.pending.some((p) => p.tries)) { this.retrying = false; this.onStatus("connected"); }
        this.expectSeq(msg.seq);
        this.onAck(msg);
      } else if (msg.type === "error") {
        if (msg.code === "other_browser") {
          // The study moved to another browser (or this one never had it): show the page that says so.
          this.closedByUs = true;
          location.reload();
          return;
        }
        if (msg.id && msg.retryable) {
          // The server could not confirm the action: send it again with the same id a little
          // later (the server answers a repeat with its first outcome, never applying it twice).
          this.retryLater(msg.id);
          return;
        }
        if (msg.id) {
          this.pending = this.pending.filter((p) => p.id !== msg.id);
          this.savePending();
        }
        this.onError(msg);
      }
    }

    /* An ack names the seq of the action's last event; its events come in their own message,
     * before or after the ack. If they have not come a while later (a broadcast lost while the
     * server's Redis was restarting), ask for them. */
    expectSeq(seq) {
      if (!seq || (this.lastSeq !== null && this.lastSeq >= seq)) return;
      setTimeout(() => {
        if (this.lastSeq !== null && this.lastSeq < seq && this.joined && this.ws.readyState === WebSocket.OPEN) {
          this.ws.send(JSON.stringify({ type: "resume", last_seq: this.lastSeq }));
        }
      }, 1500);
    }

    retryLater(id) {
      const p = this.pending.find((q) => q.id === id);
      if (!p) return;
      p.tries = (p.tries || 0) + 1;
      const delay = Math.min(500 * 2 ** (p.tries - 1), 8000);
      this.retrying = true;
      this.onStatus("retrying");
      setTimeout(() => {
        if (!this.pending.includes(p)) return;
        if (this.ws && this.ws.readyState === WebSocket.OPEN && this.joined) {
          this.ws.send(JSON.stringify({ type: "action", id: p.id, action: p.action }));
        }   // else: re-sent with every pending action when the socket joins again
      }, delay);
    }

    applyEvent(ev) {
      if (this.lastSeq !== null && ev.seq <= this.lastSeq) return;
      typing.eventFrom(ev.actor);
      try {
        this.onEvent(ev);
      } finally {   // what every game page shares (gt/stall.js), whatever the page's own handler did
        for (const hook of eventHooks) {
          try { hook(ev, this); } catch (e) { console.error(e); }
        }
      }
      this.lastSeq = ev.seq;
    }

    act(action) {
      const p = { id: uid(), action };
      this.pending.push(p);
      this.savePending();
      if (this.ws && this.ws.readyState === WebSocket.OPEN && this.joined) {
        this.ws.send(JSON.stringify({ type: "action", id: p.id, action }));
      }
      return p.id;
    }
  }

  /* Show text as text, never as HTML. */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      // through the CSSOM: a style attribute is refused by the Content-Security-Policy (style-src 'self')
      else if (k === "style") node.style.cssText = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v);
    }
    for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return node;
  }

  /* Ask the server to end the match because the partner has been gone a while. */
  function partnerGone(matchId, seat) {
    const csrf = (document.cookie.match(/csrftoken=([^;]+)/) || [])[1] || "";
    return fetch(`/m/${matchId}/partner-gone`, {
      method: "POST", body: new URLSearchParams({ seat }), headers: { "X-CSRFToken": csrf },
    }).then((r) => r.json());
  }

  /* What a match_aborted event tells this seat, in plain words. A partner who never opened the
   * game (reason partner_never_joined, live/presence.py): this seat goes on by itself to nextUrl,
   * the waiting room (first in the queue) or the last page, as the batch says. */
  function abortedText(payload, nextUrl) {
    const reason = (payload || {}).reason;
    if (reason === "partner_never_joined") {
      if (nextUrl) setTimeout(() => { location.href = nextUrl; }, 4000);
      return "Your partner did not join the game, so it could not start. This is not your fault. " +
        "Taking you on in a few seconds…";
    }
    if (reason === "partner_stalled") return "The game ended because a turn was not taken in time.";
    return reason === "partner_left" ? "The game ended because your partner left." : "The game was stopped.";
  }

  /* A partner writing its reply (an AI partner's words as they are generated, agents/llm/): the
   * page's #gt-typing element shows "Your partner is typing…" and the words so far. These frames
   * are not part of the game: the line itself arrives as an event, which hides the indicator, as
   * does silence for a while. */
  const typing = {
    quietMs: 15000,
    timer: null,
    node() { return document.getElementById("gt-typing"); },
    show(msg) {
      const node = this.node();
      if (!node) return;
      node.replaceChildren(el("span", { class: "typing-who", text: "Your partner is typing…" }),
        msg.text ? el("span", { class: "typing-text", text: " " + msg.text }) : "");
      node.dataset.role = msg.role || "";
      node.hidden = false;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.hide(), this.quietMs);
    },
    eventFrom(actor) {
      const node = this.node();
      if (node && !node.hidden && (!node.dataset.role || node.dataset.role === actor)) this.hide();
    },
    hide() {
      const node = this.node();
      clearTimeout(this.timer);
      if (node) { node.hidden = true; node.replaceChildren(); }
    },
  };

  const eventHooks = [];
  window.GT = { SeatClient, el, uid, partnerGone, abortedText, eventHooks };
})();
