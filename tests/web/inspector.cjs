// The inspector in headless Chromium, on a served run that has ended: prints the views
// before any edit ("before"), after a value the run refuses ("refused"), and after the
// control `how` is set to "rate" in its input ("edited"), as browser.cjs prints them, and
// the notes the page showed: {"notes": {...}}. With a fourth argument, a screenshot of the
// page after the edit is written there.
// Usage: node inspector.cjs URL USER_DATA_DIR [SCREENSHOT.png]
"use strict";
const { done, print, main } = require("./chromium.cjs");

main(async (browser, url, [screenshot]) => {
  const page = browser.first;
  await page.goto(url);
  await done(page);
  const how = page.locator('#controls tr[data-name="how"]');
  const input = how.locator("input");
  const note = how.locator(".note");
  await input.waitFor();
  await print(page, "before");
  const notes = {};
  // A string longer than the runtime takes: the server refuses it and says why.
  await input.fill("x".repeat(70000));
  await input.press("Enter");
  await page.waitForFunction((n) => /refused/.test(n.textContent), await note.elementHandle());
  notes.refused = await note.textContent();
  await print(page, "refused");
  await input.fill("rate");
  await input.press("Enter");
  await page.waitForFunction((n) => n.textContent === "set", await note.elementHandle());
  notes.edited = await note.textContent();
  // The inspector shows the value the run now has.
  await page.waitForFunction(() =>
    document.querySelector('#controls tr[data-name="how"] .value').textContent === '"rate"');
  await print(page, "edited");
  console.log(JSON.stringify({ notes }));
  if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });
});
