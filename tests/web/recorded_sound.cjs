// The sound of a recorded run (`voml run --record`), rendered in headless Chromium with the
// page's WebAudio voices (offline, at the speed given) and printed as its loudness over time:
// {"rate", "seconds", "window", "rms": [...]} (the RMS of both channels in each window).
// Usage: node recorded_sound.cjs FILE_URL USER_DATA_DIR SPEED WINDOW_SECONDS
"use strict";
const { main } = require("./chromium.cjs");

main(async (browser, url, [speed, window]) => {
  const page = browser.first;
  await page.goto(url);
  await page.waitForFunction(() => typeof window.vomlRenderSound === "function");
  const result = await page.evaluate(async ([speed, win]) => {
    const buffer = await window.vomlRenderSound(speed, 48000);
    const l = buffer.getChannelData(0), r = buffer.getChannelData(1);
    const n = Math.round(win * buffer.sampleRate);
    const rms = [];
    for (let i = 0; i + n <= l.length; i += n) {
      let sum = 0;
      for (let k = i; k < i + n; k++) sum += l[k] * l[k] + r[k] * r[k];
      rms.push(Math.sqrt(sum / (2 * n)));
    }
    return { rate: buffer.sampleRate, seconds: buffer.duration, window: win, rms };
  }, [Number(speed), Number(window)]);
  console.log(JSON.stringify(result));
});
