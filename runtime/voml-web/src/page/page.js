"use strict";
// The page's low-level layer: each message from the server is one or more commands (JSON
// lines, the runtime's `Command` values); each view is a canvas that they draw as the
// raster back end does.
(function () {
  const views = new Map();   // view id -> {canvas, ctx, figure, background}
  const images = new Map();  // image id -> canvas holding its pixels
  const statusEl = document.getElementById("status");
  const keysEl = document.getElementById("keys");
  const main = document.getElementById("views");
  const token = new URLSearchParams(location.search).get("token");
  let socket = null;

  const css = (c) => `rgba(${c.r},${c.g},${c.b},${c.a / 255})`;
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
    }
    if (cmd.title !== undefined) { v.caption.textContent = cmd.title; v.canvas.dataset.title = cmd.title; }
    v.canvas.dataset.view = cmd.view;
    v.canvas.width = cmd.width;
    v.canvas.height = cmd.height;
    v.background = cmd.background;
    v.ctx.fillStyle = css(cmd.background);
    v.ctx.fillRect(0, 0, cmd.width, cmd.height);
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
    const ctx = v.ctx;
    ctx.save();
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
          const copy = ctx.getImageData(a.x, a.y, a.w, a.h);
          clipTo(ctx, a);
          ctx.fillStyle = css(c.fill);
          ctx.fillRect(a.x, a.y, a.w, a.h);
          const tmp = document.createElement("canvas");
          tmp.width = a.w; tmp.height = a.h;
          tmp.getContext("2d").putImageData(copy, 0, 0);
          ctx.drawImage(tmp, a.x + c.dx, a.y + c.dy);
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
    const a = c.area, m = c.map, ctx = v.ctx;
    if (a.w <= 0 || a.h <= 0) return;
    const tmp = document.createElement("canvas");
    tmp.width = v.canvas.width; tmp.height = v.canvas.height;
    tmp.getContext("2d").drawImage(v.canvas, 0, 0);
    ctx.save();
    clipTo(ctx, a);
    ctx.fillStyle = css(c.fill);
    ctx.fillRect(a.x, a.y, a.w, a.h);
    // Old position p goes to (sx * p + ox): draw the old area under that mapping.
    ctx.setTransform(m.sx, 0, 0, m.sy, m.ox, m.oy);
    ctx.beginPath();
    ctx.rect(a.x, a.y, a.w, a.h);
    ctx.clip();
    ctx.drawImage(tmp, 0, 0);
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
      case "status":
        statusEl.textContent = c.status.text;
        keysEl.textContent = c.status.keys || "";
        document.title = "VOML · " + c.status.text;
        break;
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
      statusEl.textContent = "connected";
    };
    socket.onmessage = (e) => {
      for (const line of String(e.data).split("\n")) {
        if (!line) continue;
        try { apply(JSON.parse(line)); } catch (err) { console.error("bad command", err, line); }
      }
    };
    socket.onclose = () => {
      statusEl.textContent = "disconnected — reconnecting…";
      for (const v of views.values()) v.figure.classList.add("gone");
      setTimeout(connect, 1000);
    };
  }

  // The replay keys, as the window's: space pause/resume, → step (shift: 100), ← back,
  // Home start, + faster, - slower, 1 real time, 0 max speed.
  const replayKeys = new Set([" ", "ArrowRight", "ArrowLeft", "Home", "+", "=", "-", "1", "0"]);
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.altKey || e.metaKey || !socket || socket.readyState !== WebSocket.OPEN) return;
    if (!replayKeys.has(e.key)) return;
    const key = e.shiftKey && e.key === "ArrowRight" ? "Shift+ArrowRight" : e.key;
    socket.send(JSON.stringify({ key }));
    e.preventDefault();
  });

  connect();
})();
