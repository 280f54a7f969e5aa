// Loads the page of a `voml serve` in headless Chromium, waits until the run is done, and
// prints each view's canvas as JSON lines: {"label", "view", "title", "width", "height",
// "rgba" (base64)}. With a third argument, a second page is opened on the same address and
// printed too (label "second"): several pages watch one run.
// Usage: node browser.cjs URL USER_DATA_DIR [two] (playwright-core found through NODE_PATH).
"use strict";
const { done, print, main } = require("./chromium.cjs");

main(async (browser, url, [two]) => {
  const page = browser.first;
  await page.goto(url);
  let second = null;
  if (two) {
    second = await browser.newPage();
    await second.goto(url);
  }
  await done(page);
  await print(page, "first");
  if (second) {
    await done(second);
    await print(second, "second");
  }
});
