// What the browser tests share: headless Chromium (Debian's) driven by playwright-core
// (found through NODE_PATH), and each view's canvas read back as RGBA.
"use strict";
const { chromium } = require("playwright-core");

// A persistent context in USER_DATA_DIR, with the flags a container without a GPU or a
// sandbox needs; every page error and console error is collected in `errors`.
async function launch(userDataDir) {
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  const errors = [];
  const watch = (page) => {
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    return page;
  };
  const first = watch(context.pages()[0] || (await context.newPage()));
  return { context, errors, first, newPage: async () => watch(await context.newPage()) };
}

// Waits until the page's status says the run is done.
async function done(page) {
  await page.waitForFunction(() => /done/.test(document.getElementById("status").textContent),
    null, { timeout: 30000 });
}

// One more animation frame, so that everything received is on the canvases.
async function frame(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
}

// Every view's canvas: {title, width, height, rgba (base64)}.
async function canvases(page) {
  await frame(page);
  return page.evaluate(() => [...document.querySelectorAll("canvas")].map((c) => {
    const data = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let bin = "";
    for (let i = 0; i < data.length; i += 0x8000) {
      bin += String.fromCharCode.apply(null, data.subarray(i, i + 0x8000));
    }
    return { title: c.dataset.title, width: c.width, height: c.height, rgba: btoa(bin) };
  }));
}

// Prints a labelled picture of every view as JSON lines: {label, view, title, ...}.
async function print(page, label) {
  const views = await canvases(page);
  views.forEach((v, i) => console.log(JSON.stringify({ label, view: i, ...v })));
}

// Runs `body` with a launched browser, then prints the errors seen (if any) and closes it.
function main(body) {
  const [url, userDataDir, ...rest] = process.argv.slice(2);
  (async () => {
    const browser = await launch(userDataDir);
    try {
      await body(browser, url, rest);
      if (browser.errors.length) console.log(JSON.stringify({ errors: browser.errors }));
    } finally {
      await browser.context.close();
    }
  })().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
}

module.exports = { launch, done, frame, canvases, print, main };
