// Loads the page of a `voml serve` in headless Chromium, waits until the run is done, and
// prints each view's canvas as JSON lines: {"title", "width", "height", "rgba" (base64)}.
// Usage: node browser.cjs URL USER_DATA_DIR (playwright-core found through NODE_PATH).
"use strict";
const { chromium } = require("playwright-core");

(async () => {
  const [url, userDataDir] = process.argv.slice(2);
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  try {
    const page = context.pages()[0] || (await context.newPage());
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    await page.goto(url);
    await page.waitForFunction(() => /done/.test(document.getElementById("status").textContent),
      null, { timeout: 30000 });
    // One more frame, so that everything received is on the canvases.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
    const views = await page.evaluate(() => [...document.querySelectorAll("canvas")].map((c) => {
      const data = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      let bin = "";
      for (let i = 0; i < data.length; i += 0x8000) {
        bin += String.fromCharCode.apply(null, data.subarray(i, i + 0x8000));
      }
      return { title: c.dataset.title, width: c.width, height: c.height, rgba: btoa(bin) };
    }));
    for (const v of views) console.log(JSON.stringify(v));
    if (errors.length) console.log(JSON.stringify({ errors }));
  } finally {
    await context.close();
  }
})().catch((e) => { console.error(String(e)); process.exit(1); });
