// A recorded run (`voml run --record`) opened from disk in headless Chromium: it replays to
// its end ("end"); then the seek bar, let go at 1 s, draws the moments up to 1 s ("seek");
// each printed as browser.cjs prints views, with every request the page made beyond its
// own file ({"requests": [...]}: none expected).
// Usage: node recorded.cjs FILE_URL USER_DATA_DIR [SCREENSHOT.png]
"use strict";
const { done, print, main } = require("./chromium.cjs");

main(async (browser, url, [screenshot]) => {
  const page = browser.first;
  const requests = [];
  page.on("request", (r) => { if (r.url() !== url && !r.url().startsWith("data:")) requests.push(r.url()); });
  await page.goto(url);
  await done(page);
  await print(page, "end");
  await page.evaluate(() => {
    const seek = document.getElementById("seek");
    seek.dispatchEvent(new PointerEvent("pointerdown"));
    seek.value = "1";
    seek.dispatchEvent(new Event("change"));
  });
  await page.waitForFunction(() => {
    const text = document.getElementById("status").textContent;
    const t = /trace time ([0-9.]+)/.exec(text);
    return /paused/.test(text) && t && Number(t[1]) <= 1;
  });
  await print(page, "seek");
  console.log(JSON.stringify({ requests, status: await page.textContent("#status") }));
  if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });
});
