// The replay controls in headless Chromium, on a paced served run: once the run has passed
// trace time 2.2 s, the pause button; the seek bar set to 1 s ("seek"); the step button
// ("step"); each printed as browser.cjs prints views. With a third argument, a screenshot
// of the paused page is written there.
// Usage: node replay.cjs URL USER_DATA_DIR [SCREENSHOT.png]
"use strict";
const { print, main } = require("./chromium.cjs");

// The record count and trace time the page's status shows.
const where = (page) => page.evaluate(() => ({
  records: Number((/(\d+) records/.exec(document.getElementById("status").textContent) || [])[1]),
  time: Number(document.getElementById("seek").value),
  paused: /paused/.test(document.getElementById("status").textContent),
  max: Number(document.getElementById("seek").max),
}));

main(async (browser, url, [screenshot]) => {
  const page = browser.first;
  await page.goto(url);
  await page.waitForFunction(() => Number(document.getElementById("seek").max) > 2.2, null,
    { timeout: 30000 });
  await page.click("#play");
  await page.waitForFunction(() => /paused/.test(document.getElementById("status").textContent));
  // The seek bar, as a user lets go of it at 1 s.
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
  const seeked = await where(page);
  await print(page, "seek");
  await page.click("#step");
  await page.waitForFunction((n) =>
    Number((/(\d+) records/.exec(document.getElementById("status").textContent) || [])[1]) === n + 1,
  seeked.records);
  await print(page, "step");
  console.log(JSON.stringify({ seeked, stepped: await where(page) }));
  if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });
});
