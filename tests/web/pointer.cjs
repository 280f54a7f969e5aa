// The wheel and a drag on a view in headless Chromium, once the served run is done: one
// notch of the wheel towards the screen over the canvas, then a drag with the left button.
// Prints the inputs the page sent ({"inputs": [...]}), then the views (label "zoomed") once
// the run has answered a command sent after them, so that their pictures are on the canvases.
// Usage: node pointer.cjs URL USER_DATA_DIR
"use strict";
const { done, print, main } = require("./chromium.cjs");

main(async (browser, url) => {
  const page = browser.first;
  // What the page sends, kept for the test (the page's own socket, unchanged).
  await page.addInitScript(() => {
    window.__sent = [];
    const send = WebSocket.prototype.send;
    WebSocket.prototype.send = function (data) {
      window.__sent.push(String(data));
      window.__socket = this;
      return send.call(this, data);
    };
  });
  await page.goto(url);
  await done(page);
  const box = await page.locator("canvas").first().boundingBox();
  const [cx, cy] = [box.x + box.width * 0.4, box.y + box.height * 0.6];
  await page.mouse.move(cx, cy);
  await page.mouse.wheel(0, -100);
  await page.waitForFunction(() => window.__sent.some((m) => m.includes('"zoom"')));
  await page.mouse.down();
  for (let i = 1; i <= 5; i++) {
    await page.mouse.move(cx + 8 * i, cy - 4 * i);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
  }
  await page.mouse.up();
  await page.waitForFunction(() => window.__sent.some((m) => m.includes('"pan"')));
  // The page sends a drag's moves once a frame: the last may still be on its way.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  // A command after the inputs: its answer (the input has ended) comes once they are drawn.
  await page.evaluate(() => window.__socket.send(JSON.stringify({ command: "step", id: 999999 })));
  await page.waitForFunction(() => /ended/.test(document.getElementById("message").textContent));
  const inputs = await page.evaluate(() => window.__sent.map((m) => JSON.parse(m))
    .filter((m) => m.input).map((m) => m.input));
  console.log(JSON.stringify({ inputs }));
  await print(page, "zoomed");
});
