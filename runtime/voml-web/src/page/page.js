"use strict";
// The page's low-level layer: each message from the server is one or more commands (JSON
// lines, the runtime's `Command` values); each view is a canvas that they draw as the
// raster back end does. Besides them come the inspector's structures and values and the
// answers to the page's own commands. The replay controls and the inspector send command
// lines of the driver's replay control language (`step`, `seek T`, `set NAME VALUE`).
(function () {
  const views = new Map();   // view id -> {canvas, ctx, figure, background}
  const images = new Map();  // image id -> canvas holding its pixels
  const statusEl = document.getElementById("status");
  const keysEl = document.getElementById("keys");
  const main = document.getElementById("views");
  const messageEl = document.getElementById("message");
  const timeEl = document.getElementById("time");
  const seekEl = document.getElementById("seek");
  const speedEl = document.getElementById("speed");
  const playEl = document.getElementById("play");
  const token = new URLSearchParams(location.search).get("token");
  let socket = null;
  let status = null;        // the latest status from the driver
  let seeking = false;      // the seek bar is held: the status does not move it
  let nextId = 1;           // ids of the page's commands, for their answers
  const waiting = new Map(); // command id -> what to do with its answer

  const css = (c) => `rgba(${c.r},${c.g},${c.b},${c.a / 255})`;
  // Device pixels per view pixel: a canvas has this many times the view's pixels each way
  // and draws the commands (paths, text, images) at that scale, so that lines and text are
  // as sharp as the screen (a high-density screen, the browser's zoom). Whole numbers keep
  // the pixel moves of scrolling exact.
  const density = () => Math.max(1, Math.min(4, Math.round(window.devicePixelRatio || 1)));
  const families = { sans: "'DejaVu Sans', Verdana, sans-serif", serif: "'DejaVu Serif', Georgia, serif",
    mono: "'DejaVu Sans Mono', Menlo, monospace", monospace: "'DejaVu Sans Mono', Menlo, monospace" };

  function surface(cmd) {
    let v = views.get(cmd.view);
    if (!v) {
      const figure = document.createElement("figure");
      const caption = document.createElement("figcaption");
      const canvas = document.createElement("canvas");
      figure.append(caption, canvas);
      main.append(figure);
      v = { figure, caption, canvas, ctx: canvas.getContext("2d") };
      views.set(cmd.view, v);
      pointer(cmd.view, canvas);
    }
    if (cmd.title !== undefined) { v.caption.textContent = cmd.title; v.canvas.dataset.title = cmd.title; }
    v.canvas.dataset.view = cmd.view;
    v.k = density();
    v.width = cmd.width;
    v.height = cmd.height;
    v.canvas.width = cmd.width * v.k;
    v.canvas.height = cmd.height * v.k;
    v.canvas.style.width = cmd.width + "px";
    v.background = cmd.background;
    v.ctx.fillStyle = css(cmd.background);
    v.ctx.fillRect(0, 0, v.canvas.width, v.canvas.height);
  }

  function path(ctx, p) {
    ctx.beginPath();
    for (const s of p.segs) {
      if (s === "Close") ctx.closePath();
      else if (s.MoveTo) ctx.moveTo(s.MoveTo[0], s.MoveTo[1]);
      else if (s.LineTo) ctx.lineTo(s.LineTo[0], s.LineTo[1]);
      else if (s.CubicTo) ctx.bezierCurveTo(...s.CubicTo);
    }
  }

  function clipTo(ctx, r) {
    ctx.beginPath();
    ctx.rect(r.x, r.y, r.w, r.h);
    ctx.clip();
  }

  function draw(view, c) {
    const v = views.get(view);
    if (!v) return;
    const ctx = v.ctx, k = v.k;
    ctx.save();
    ctx.setTransform(k, 0, 0, k, 0, 0);
    try {
      switch (c.kind) {
        case "clear":
          ctx.clearRect(c.rect.x, c.rect.y, c.rect.w, c.rect.h);
          ctx.fillStyle = css(c.color);
          ctx.fillRect(c.rect.x, c.rect.y, c.rect.w, c.rect.h);
          break;
        case "shift": {
          const a = c.area;
          if (a.w <= 0 || a.h <= 0) break;
          const copy = ctx.getImageData(a.x * k, a.y * k, a.w * k, a.h * k);
          clipTo(ctx, a);
          ctx.fillStyle = css(c.fill);
          ctx.fillRect(a.x, a.y, a.w, a.h);
          const tmp = document.createElement("canvas");
          tmp.width = a.w * k; tmp.height = a.h * k;
          tmp.getContext("2d").putImageData(copy, 0, 0);
          ctx.drawImage(tmp, a.x + c.dx, a.y + c.dy, a.w, a.h);
          break;
        }
        case "stroke":
          clipTo(ctx, c.clip);
          path(ctx, c.path);
          ctx.lineWidth = c.style.width;
          ctx.lineCap = c.style.cap;
          ctx.lineJoin = c.style.join;
          ctx.setLineDash(c.style.dash);
          ctx.lineDashOffset = c.style.dash_offset;
          ctx.strokeStyle = css(c.color);
          ctx.stroke();
          break;
        case "fill":
          clipTo(ctx, c.clip);
          path(ctx, c.path);
          ctx.fillStyle = css(c.color);
          ctx.fill("nonzero");
          break;
        case "text":
          clipTo(ctx, c.clip);
          ctx.font = `${c.font.bold ? "bold " : ""}${c.font.size_px}px ${families[c.font.family] || "sans-serif"}`;
          ctx.textBaseline = "alphabetic";
          ctx.fillStyle = css(c.color);
          ctx.fillText(c.text, c.x, c.baseline);
          break;
        case "image": {
          const img = images.get(c.image);
          if (!img) break;
          clipTo(ctx, c.clip);
          ctx.globalAlpha = c.alpha;
          ctx.imageSmoothingEnabled = false;
          const [u0, v0, u1, v1] = c.src, [x0, y0, x1, y1] = c.dst;
          // Mirrored sources: flip the box instead.
          ctx.translate(u1 < u0 ? x0 + x1 : 0, v1 < v0 ? y0 + y1 : 0);
          ctx.scale(u1 < u0 ? -1 : 1, v1 < v0 ? -1 : 1);
          ctx.drawImage(img, Math.min(u0, u1), Math.min(v0, v1), Math.abs(u1 - u0), Math.abs(v1 - v0),
            x0, y0, x1 - x0, y1 - y0);
          break;
        }
      }
    } finally {
      ctx.restore();
    }
  }

  function remap(c) {
    const v = views.get(c.view);
    if (!v) return;
    const a = c.area, m = c.map, ctx = v.ctx, k = v.k;
    if (a.w <= 0 || a.h <= 0) return;
    const tmp = document.createElement("canvas");
    tmp.width = v.canvas.width; tmp.height = v.canvas.height;
    tmp.getContext("2d").drawImage(v.canvas, 0, 0);
    ctx.save();
    ctx.setTransform(k, 0, 0, k, 0, 0);
    clipTo(ctx, a);
    ctx.fillStyle = css(c.fill);
    ctx.fillRect(a.x, a.y, a.w, a.h);
    // Old position p goes to (sx * p + ox): draw the old area under that mapping.
    ctx.setTransform(k * m.sx, 0, 0, k * m.sy, k * m.ox, k * m.oy);
    ctx.beginPath();
    ctx.rect(a.x, a.y, a.w, a.h);
    ctx.clip();
    ctx.drawImage(tmp, 0, 0, v.width, v.height);
    ctx.restore();
  }

  function addImage(c) {
    const p = c.pixels;
    const bytes = Uint8ClampedArray.from(atob(p.data), (ch) => ch.charCodeAt(0));
    const canvas = document.createElement("canvas");
    canvas.width = p.width; canvas.height = p.height;
    if (p.width > 0 && p.height > 0) {
      canvas.getContext("2d").putImageData(new ImageData(bytes, p.width, p.height), 0, 0);
    }
    images.set(c.image, canvas);
  }

  function apply(c) {
    switch (c.op) {
      case "create-surface": surface(c); break;
      case "resize-surface": surface(c); break;
      case "destroy-surface": {
        const v = views.get(c.view);
        if (v) { v.figure.remove(); views.delete(c.view); }
        break;
      }
      case "add-image": addImage(c); break;
      case "draw": case "draw-owned": draw(c.view, c.cmd); break;
      // A raster keeps pixels only: it paints the erase commands the core gives.
      case "undraw": for (const [view, cmd] of c.erase) draw(view, cmd); break;
      case "remap-area": remap(c); break;
      case "status": showStatus(c.status); break;
      case "sound": sound(c); break;
      case "inspector": inspect(c); break;
      case "answer": answered(c); break;
      default: break; // begin-buffer, flush, present: the page shows at its next frame anyway
    }
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const url = `${scheme}//${location.host}/ws` + (token ? `?token=${encodeURIComponent(token)}` : "");
    socket = new WebSocket(url);
    socket.onopen = () => {
      // A page that joins (again) gets everything that draws the current picture.
      for (const v of views.values()) v.figure.remove();
      views.clear();
      images.clear();
      waiting.clear();
      statusEl.textContent = "connected";
    };
    socket.onmessage = (e) => {
      for (const line of String(e.data).split("\n")) {
        if (!line) continue;
        try { apply(JSON.parse(line)); } catch (err) { console.error("bad command", err, line); }
      }
    };
    socket.onclose = () => {
      if (rejoin) { rejoin = false; connect(); return; }
      statusEl.textContent = "disconnected — reconnecting…";
      for (const v of views.values()) v.figure.classList.add("gone");
      setTimeout(connect, 1000);
    };
  }

  const open = () => socket && socket.readyState === WebSocket.OPEN;

  // The browser's zoom, or a move to another screen, changes the density: the page draws
  // everything again at the new one (a served page joins again and gets the picture; a
  // recording draws again up to where it stands).
  let rejoin = false;
  let drawnAt = density();
  function densityChanged() {
    if (density() === drawnAt) return;
    drawnAt = density();
    if (player) player.redraw();
    else if (open()) { rejoin = true; socket.close(); }
  }
  // A zoom resizes the layout viewport; a move to another screen may not: looked at every
  // second too.
  window.addEventListener("resize", densityChanged);
  setInterval(densityChanged, 1000);

  // Sound: off until the user turns it on (a browser starts audio only at a gesture). A
  // served run's sound commands are played as they come, a recording's as its moments are
  // drawn while it plays at a speed.
  const soundEl = document.getElementById("sound");
  let audio = null;   // {ctx, synth} while on
  soundEl.addEventListener("click", () => {
    if (audio) {
      audio.ctx.close();
      audio = null;
    } else {
      const ctx = new AudioContext();
      audio = { ctx, synth: VomlSound.Synth(ctx, ctx.destination) };
    }
    soundEl.textContent = audio ? "sound on" : "sound off";
    soundEl.setAttribute("aria-pressed", audio ? "true" : "false");
  });
  function sound(c) {
    if (player) return player.sound(c);
    if (!audio) return;
    const scale = status && status.speed ? status.speed : 1;
    audio.synth.play(c.sound, audio.ctx.currentTime + 0.05, scale);
  }

  let player = null;         // a recorded run's player, instead of the server

  // A command line for the driver (or the recording's player); `then` hears its answer
  // ({ok, message}).
  function command(line, then) {
    if (player) {
      const why = player.command(line);
      const a = why ? { ok: false, message: why } : { ok: true };
      if (then) then(a); else if (!a.ok) say(a.message, true);
      return;
    }
    if (!open()) { say("not connected", true); return; }
    const id = nextId++;
    waiting.set(id, then || ((a) => { if (!a.ok) say(a.message, true); }));
    socket.send(JSON.stringify({ command: line, id }));
  }

  function answered(a) {
    const then = waiting.get(a.id);
    waiting.delete(a.id);
    if (then) then(a);
    else if (!a.ok) say(a.message, true);
  }

  let sayTimer = null;
  function say(text, bad) {
    messageEl.textContent = text || "";
    messageEl.classList.toggle("bad", !!bad);
    clearTimeout(sayTimer);
    sayTimer = setTimeout(() => { messageEl.textContent = ""; }, 8000);
  }

  const seconds = (t) => (Math.abs(t) >= 100 ? t.toFixed(1) : Math.abs(t) >= 1 ? t.toFixed(3) : t.toPrecision(4)) + " s";

  function showStatus(st) {
    status = st;
    statusEl.textContent = st.text;
    document.title = "VOML · " + st.text;
    // The driver lists keys while the user drives the replay; the page offers its own.
    keysEl.textContent = st.keys ? KEYS_HELP + (player ? "" : VIEW_HELP) : "";
    // A recording may be replayed again after its end; a run may not.
    const live = st.local || (!!st.keys && !st.finished);
    for (const b of document.querySelectorAll("#replay button:not(#sound)")) b.disabled = !live;
    speedEl.disabled = !live;
    playEl.textContent = st.paused ? "resume" : "pause";
    playEl.dataset.paused = st.paused ? "1" : "";
    timeEl.textContent = st.trace_time == null ? "t = –" : "t = " + seconds(st.trace_time);
    const span = st.span;
    seekEl.disabled = !live || !span;
    if (span && !seeking) {
      seekEl.min = span[0];
      seekEl.max = Math.max(span[1], span[0] + 1e-9);
      seekEl.value = st.trace_time == null ? span[0] : st.trace_time;
    }
    const speed = st.speed == null ? "max" : String(st.speed);
    if (![...speedEl.options].some((o) => o.value === speed)) {
      const o = document.createElement("option");
      o.value = speed; o.textContent = "×" + st.speed;
      speedEl.append(o);
    }
    if (document.activeElement !== speedEl) speedEl.value = speed;
  }

  // What the user does in a view, as a window's pointer does: the wheel zooms around the
  // pointer, a drag pans, a click (pressed and released without dragging) goes to the
  // program. The run changes the view's world and its components redraw, as in a window;
  // the page draws what comes back. A recording has no run to ask: it shows what it holds.
  const ZOOM_STEP = 1.2;     // per wheel notch, as a window's
  const DRAG = 3;            // pixels a press moves before it is a drag, not a click
  function input(event) {
    if (!player && open()) socket.send(JSON.stringify({ input: event }));
  }
  function pointer(view, canvas) {
    // Page pixels to the view's own (the canvas may be shown smaller than it is).
    const at = (e) => {
      const r = canvas.getBoundingClientRect();
      const v = views.get(view);
      return [(e.clientX - r.left) * v.width / (r.width || 1),
        (e.clientY - r.top) * v.height / (r.height || 1)];
    };
    const scale = () => views.get(view).width / (canvas.getBoundingClientRect().width || 1);
    let wheel = null;        // notches and where, until the next frame
    canvas.addEventListener("wheel", (e) => {
      if (player) return;
      e.preventDefault();
      const lines = e.deltaMode === 1 ? e.deltaY / 3 : e.deltaMode === 2 ? e.deltaY : e.deltaY / 100;
      if (!wheel) {
        wheel = { notches: 0, at: at(e) };
        requestAnimationFrame(() => {
          const w = wheel; wheel = null;
          const factor = Math.pow(ZOOM_STEP, w.notches);
          if (w.notches !== 0 && isFinite(factor)) {
            input({ event: "zoom", view, factor: Math.min(64, Math.max(1 / 64, factor)), x: w.at[0], y: w.at[1] });
          }
        });
      }
      wheel.notches -= lines;   // away from the user (up) zooms in
    }, { passive: false });
    let press = null;        // {id, x, y, moved, button, dx, dy}
    canvas.addEventListener("pointerdown", (e) => {
      if (player) return;
      press = { id: e.pointerId, x: e.clientX, y: e.clientY, moved: false, button: e.button, dx: 0, dy: 0, at: at(e) };
      canvas.setPointerCapture(e.pointerId);
    });
    canvas.addEventListener("pointermove", (e) => {
      if (!press || press.id !== e.pointerId) return;
      const k = scale();
      const tx = (e.clientX - press.x) * k, ty = (e.clientY - press.y) * k;
      if (!press.moved && Math.hypot(tx, ty) < DRAG) return;
      if (!press.moved) canvas.classList.add("dragging");
      press.moved = true;
      // Only what was not sent yet; a frame's moves go together.
      const p = press;
      if (p.dx === tx && p.dy === ty) return;
      if (!p.frame) {
        p.frame = requestAnimationFrame(() => {
          p.frame = 0;
          const dx = p.tx - p.dx, dy = p.ty - p.dy;
          p.dx = p.tx; p.dy = p.ty;
          if (dx || dy) input({ event: "pan", view, dx, dy });
        });
      }
      p.tx = tx; p.ty = ty;
    });
    const release = (e) => {
      if (!press || press.id !== e.pointerId) return;
      const p = press; press = null;
      canvas.classList.remove("dragging");
      if (e.type === "pointerup" && !p.moved) {
        input({ event: "click", view, x: p.at[0], y: p.at[1], button: p.button + 1 });
      }
    };
    canvas.addEventListener("pointerup", release);
    canvas.addEventListener("pointercancel", release);
    canvas.addEventListener("contextmenu", (e) => { if (!player) e.preventDefault(); });
  }

  // The replay controls: the same commands as the keys and `--control`.
  const buttons = {
    start: "seek start", back: "back", step: "step", step100: "step 100",
  };
  for (const [id, line] of Object.entries(buttons)) {
    document.getElementById(id).addEventListener("click", () => command(line));
  }
  playEl.addEventListener("click", () => command(playEl.dataset.paused ? "resume" : "pause"));
  speedEl.addEventListener("change", () => command("speed " + speedEl.value));
  seekEl.addEventListener("pointerdown", () => { seeking = true; });
  seekEl.addEventListener("change", () => {
    seeking = false;
    command("seek " + Number(seekEl.value));
  });

  // The replay keys, as the window's: space pause/resume, → step (shift: 100), ← back,
  // Home start, + faster, - slower, 1 real time, 0 max speed. (A window's `s` writes
  // pictures to files, which a served run has none of.)
  const KEYS_HELP = "space pause/resume · → step (shift: 100) · ← back · Home start · + faster · - slower · 1 real time · 0 max speed";
  const VIEW_HELP = " · in a view: wheel zoom · drag pan · click goes to the program";
  const replayKeys = new Set([" ", "ArrowRight", "ArrowLeft", "Home", "+", "=", "-", "1", "0"]);
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.altKey || e.metaKey || !(open() || player)) return;
    // Typing in the inspector is not driving the replay.
    if (e.target.closest && e.target.closest("input, select, textarea, button")) return;
    if (!replayKeys.has(e.key)) return;
    const key = e.shiftKey && e.key === "ArrowRight" ? "Shift+ArrowRight" : e.key;
    if (player) command(player.keyCommand(key));
    else socket.send(JSON.stringify({ key }));
    e.preventDefault();
  });

  // The inspector: the visual object's info and control structures with their values as
  // they change; control structures are edited with inputs of their declared type, and a
  // value is sent as `set NAME VALUE` only once it reads as that type.
  const voNameEl = document.getElementById("vo-name");
  const tables = { infos: document.querySelector("#infos tbody"), controls: document.querySelector("#controls tbody") };
  const rows = { infos: new Map(), controls: new Map() };
  let shape = "";

  // The value an input holds, as JSON of the structure's type, or an Error saying why not.
  function typed(type, input) {
    const text = input.type === "checkbox" ? null : input.value.trim();
    switch (type) {
      case "boolean": return input.checked;
      case "int":
        if (!/^[-+]?\d+$/.test(text)) return new Error("an int is a whole number, e.g. 3");
        if (!Number.isSafeInteger(Number(text))) return new Error("too large for an int");
        return Number(text);
      case "real": {
        const x = Number(text);
        if (text === "" || !Number.isFinite(x)) return new Error("a real is a number, e.g. 0.5");
        return x;
      }
      case "string": return input.value;
      default: {
        let v;
        try { v = JSON.parse(text); } catch (e) { return new Error("not JSON: " + e.message); }
        if ((type === "list" || type === "vector") && !Array.isArray(v)) {
          return new Error(`a ${type} is written [a, b, …]`);
        }
        return v;
      }
    }
  }

  function editor(s) {
    const input = document.createElement("input");
    input.name = s.name;
    input.dataset.type = s.type;
    input.setAttribute("aria-label", `${s.name} (${s.type})`);
    switch (s.type) {
      case "boolean": input.type = "checkbox"; break;
      case "int": input.type = "text"; input.inputMode = "numeric"; break;
      case "real": input.type = "text"; input.inputMode = "decimal"; break;
      default: input.type = "text"; input.spellcheck = false;
        if (s.type !== "string") input.placeholder = "JSON, e.g. [1, 2]";
    }
    return input;
  }

  function row(kind, s) {
    const tr = document.createElement("tr");
    tr.dataset.name = s.name;
    const name = document.createElement("th");
    name.textContent = s.name;
    name.scope = "row";
    const type = document.createElement("td");
    type.className = "type";
    type.textContent = s.type;
    const cell = document.createElement("td");
    const value = document.createElement("div");
    value.className = "value";
    cell.append(value);
    tr.append(name, type, cell);
    const r = { tr, value };
    if (kind === "controls") {
      const edit = document.createElement("td");
      const form = document.createElement("form");
      const input = editor(s);
      const set = document.createElement("button");
      set.type = "submit";
      set.textContent = "Set";
      const note = document.createElement("div");
      note.className = "note";
      note.setAttribute("role", "status");
      form.append(input, set, note);
      edit.append(form);
      tr.append(edit);
      r.input = input; r.note = note; r.dirty = false;
      input.addEventListener("input", () => { r.dirty = true; });
      const send = (e) => {
        if (e) e.preventDefault();
        const v = typed(s.type, input);
        if (v instanceof Error) {
          note.textContent = "refused: " + v.message;
          note.className = "note bad";
          return;
        }
        note.textContent = "…";
        note.className = "note";
        command(`set ${s.name} ${JSON.stringify(v)}`, (a) => {
          note.textContent = a.ok ? "set" : "refused: " + a.message;
          note.className = a.ok ? "note ok" : "note bad";
          if (a.ok) r.dirty = false;
        });
      };
      form.addEventListener("submit", send);
      if (s.type === "boolean") input.addEventListener("change", () => send());
    }
    return r;
  }

  function inspect(c) {
    document.getElementById("inspector").hidden = false;
    voNameEl.textContent = c["visual-object"] ? "· " + c["visual-object"] : "";
    const now = JSON.stringify([c.infos.map((s) => [s.name, s.type]), c.controls.map((s) => [s.name, s.type])]);
    if (now !== shape) {
      shape = now;
      for (const kind of ["infos", "controls"]) {
        tables[kind].replaceChildren();
        rows[kind].clear();
        for (const s of c[kind]) {
          const r = row(kind, s);
          rows[kind].set(s.name, r);
          tables[kind].append(r.tr);
        }
      }
    }
    for (const kind of ["infos", "controls"]) {
      for (const s of c[kind]) {
        const r = rows[kind].get(s.name);
        if (!r) continue;
        r.value.textContent = s.text;
        r.value.classList.toggle("cut", !!s.cut);
        if (!r.input) continue;
        r.input.disabled = !!s.cut;
        // What the user is typing stays; otherwise the input shows the value now.
        if (r.dirty || document.activeElement === r.input) continue;
        if (s.type === "boolean") r.input.checked = s.value === true;
        else if (s.type === "string") r.input.value = typeof s.value === "string" ? s.value : "";
        else r.input.value = s.cut ? "" : s.text;
      }
    }
  }

  // A recorded run (`voml run --record`): its moments, each the trace time of the record
  // that drew it (null: before any record) and the commands drawn, replayed here with the
  // replay commands the driver knows. Going back draws again from the start, as the driver
  // runs again: the commands are the same, so the picture is the same.
  function startPlayer(rec) {
    const moments = rec.moments;
    const times = moments.map((m) => m[0]).filter((t) => t !== null);
    const first = times.length ? times[0] : 0;
    const last = times.length ? times[times.length - 1] : 0;
    let next = 0;           // the next moment to draw
    let clock = null;       // the trace time drawn up to
    let playing = true;
    let speed = null;       // trace seconds per second; null: as fast as possible
    let lastFrame = null;
    let lines = 0;
    let drawing = false; // drawing moments while playing at a speed: their sound plays
    let tempo = 1;
    document.title = "VOML · " + rec.title;
    // Every sound command, for rendering them all (`renderSound`).
    const sounds = [];
    for (const [, text] of moments) {
      for (const line of text.split("\n")) {
        if (line.startsWith('{"op":"sound"')) sounds.push(JSON.parse(line));
      }
    }

    const reset = () => {
      for (const v of views.values()) v.figure.remove();
      views.clear();
      images.clear();
      next = 0; clock = null; lines = 0;
    };
    const drawMoment = () => {
      const [t, text] = moments[next++];
      for (const line of text.split("\n")) {
        if (!line) continue;
        lines++;
        try { apply(JSON.parse(line)); } catch (err) { console.error("bad command", err, line); }
      }
      if (t !== null) clock = t;
    };
    // Every moment stamped at most `t` drawn (and those before any record).
    const drawTo = (t) => {
      if (clock !== null && t < clock) reset();
      while (next < moments.length && (moments[next][0] === null || moments[next][0] <= t)) drawMoment();
    };
    const show = () => {
      const done = next >= moments.length;
      let text = `recorded run — ${next} of ${moments.length} moments`;
      if (clock !== null) text += ` — trace time ${seconds(clock)}`;
      if (speed !== null) text += ` — ×${speed}`;
      if (done) text += " — done";
      else if (!playing) text = "paused — " + text;
      if (rec.cut !== null && rec.cut !== undefined) text += ` (recorded up to ${seconds(rec.cut)})`;
      showStatus({ text, trace_time: clock, speed, finished: done, paused: !playing && !done,
        keys: "yes", span: [first, Math.max(last, first)], local: true });
    };
    const frame = (now) => {
      if (playing && next < moments.length) {
        if (speed === null) {
          // As fast as possible, a slice of a frame at a time, so that the page stays live.
          const until = performance.now() + 12;
          while (next < moments.length && performance.now() < until) drawMoment();
        } else {
          const dt = lastFrame === null ? 0 : (now - lastFrame) / 1000;
          const t = (clock === null ? first : clock) + dt * speed;
          drawing = true;
          drawTo(t);
          drawing = false;
          if (next < moments.length) clock = t;
        }
      }
      if (next >= moments.length) playing = false;
      lastFrame = now;
      show();
      requestAnimationFrame(frame);
    };
    player = {
      // The same moments drawn again (at a new density).
      redraw() {
        const n = next;
        reset();
        while (next < n) drawMoment();
      },
      // A sound command of a moment drawn: played when it is drawn while the recording
      // plays at a speed (not when it hurries, steps or seeks).
      sound(c) {
        if (c.sound.op === "tempo") tempo = c.sound.factor;
        if (!audio || !drawing || speed === null) return;
        audio.synth.play(c.sound, audio.ctx.currentTime + 0.05, speed * tempo);
      },
      command(line) {
        const [verb, arg, extra] = line.trim().split(/\s+/);
        if (extra !== undefined) return `\`${verb}\` takes at most one argument`;
        switch (verb) {
          case "pause": playing = false; break;
          case "resume": playing = next < moments.length; lastFrame = null; break;
          case "step": {
            const n = arg === undefined ? 1 : Number(arg);
            if (!Number.isInteger(n) || n < 0) return "`step` needs a number of moments";
            playing = false;
            for (let k = 0; k < n && next < moments.length; k++) {
              drawMoment();
              // A moment before any record goes with the first one.
              if (moments[next - 1][0] === null) k--;
            }
            break;
          }
          case "back": {
            playing = false;
            const before = times.filter((t) => clock !== null && t < clock);
            reset();
            if (before.length) drawTo(before[before.length - 1]);
            break;
          }
          case "seek": {
            const t = arg === "start" ? -Infinity : Number(arg);
            if (arg === undefined || Number.isNaN(t)) return "`seek` needs a trace time or `start`";
            playing = false;
            if (t === -Infinity) { reset(); drawTo(-Infinity); } else drawTo(t);
            break;
          }
          case "speed": {
            if (arg === "max" || Number(arg) === 0) { speed = null; break; }
            const f = Number(arg);
            if (!(f > 0) || !Number.isFinite(f)) return "`speed` needs a factor of 0 or more, or `max`";
            speed = f; lastFrame = null;
            break;
          }
          default: return `unknown command \`${verb}\` (a recording takes: pause, resume, step [N], back, seek T, speed F)`;
        }
        show();
        return null;
      },
      keyCommand(key) {
        switch (key) {
          case " ": return playing ? "pause" : "resume";
          case "ArrowRight": return "step";
          case "Shift+ArrowRight": return "step 100";
          case "ArrowLeft": return "back";
          case "Home": return "seek start";
          case "+": case "=": return speed === null ? "speed max" : "speed " + Math.min(speed * 2, 1048576);
          case "-": return "speed " + (speed === null ? 1 : Math.max(speed / 2, 1 / 1024));
          case "1": return "speed 1";
          default: return "speed max";
        }
      },
    };
    statusEl.textContent = "recorded run";
    // The whole recording's sound, rendered offline at `speed` as the WAV writer would
    // (`voml run --audio`): an AudioBuffer.
    window.vomlRenderSound = (speed, sampleRate) =>
      VomlSound.render(sounds, rec.origin === null || rec.origin === undefined ? first : rec.origin,
        speed, sampleRate || 48000);
    requestAnimationFrame(frame);
  }

  const recording = document.getElementById("recording");
  if (recording) startPlayer(JSON.parse(recording.textContent));
  else connect();
})();
