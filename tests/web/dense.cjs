// A page on a screen whose density changes, as with the browser's zoom or a move to a
// high-density screen: the views printed at 1 device pixel per view pixel (label "plain"),
// then, once the screen has 2 (Chrome's device metrics emulation), drawn again at that
// density (label "dense"). Usage: node dense.cjs URL USER_DATA_DIR
"use strict";
const { done, print, main } = require("./chromium.cjs");

main(async (browser, url) => {
  const page = browser.first;
  await page.goto(url);
  await done(page);
  await print(page, "plain");
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Emulation.setDeviceMetricsOverride",
    { width: 1400, height: 900, deviceScaleFactor: 2, mobile: false });
  await page.waitForFunction(() => window.devicePixelRatio === 2);
  // The page joins again and draws the picture at the new density.
  await page.waitForFunction(() => [...document.querySelectorAll("canvas")].every((c) =>
    c.width === 2 * parseInt(c.style.width, 10)), null, { timeout: 30000 });
  await done(page);
  await print(page, "dense");
});
