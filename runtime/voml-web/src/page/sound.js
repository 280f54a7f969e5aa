"use strict";
// The page's sound: the runtime's sound commands (`SoundCommand`, as JSON) played with
// WebAudio by the voices of the synthesiser (runtime/voml-sound): the same partials (body
// and bright layers, the bell's in twentieths of the note), envelopes (linear attack, an
// exponential fall towards the sustain, a release that falls 80 dB in its time, damped or
// ringing out), the vibraphone's tremolo and the string's delayed vibrato, band-passed noise,
// the equal-loudness gain and the headroom per note, constant-power pan, channels (voice,
// pan, volume, mute), the master volume and a limiter at the end. Trace time becomes output
// time as the WAV writer maps it: from the first record, divided by the speed and the tempo.
const VomlSound = (function () {
  const INF = Infinity;
  const LN_80DB = Math.log(1e4);
  const VOICE_HEADROOM = 0.3;
  const CHANNELS = 16;
  // Envelope and modulation of each voice (voice.rs `spec`).
  const SPECS = {
    sine: { attack: 0.005, bodyTau: INF, sustain: 1, brightTau: INF, release: 0.04, damped: true },
    vibes: { attack: 0.0015, bodyTau: 1.2, sustain: 0.25, brightTau: 0.12, release: 0.15, damped: true,
      tremoloHz: 5.5, tremoloDepth: 0.3 },
    marimba: { attack: 0.001, bodyTau: 0.2, sustain: 0, brightTau: 0.04, release: 0.3, damped: false },
    bell: { attack: 0.001, bodyTau: 1.0, sustain: 0, brightTau: 0.2, release: 1.2, damped: true },
    string: { attack: 0.08, bodyTau: INF, sustain: 1, brightTau: INF, release: 0.25, damped: true,
      vibratoHz: 5.2, vibratoDepth: 0.004, vibratoDelay: 0.15 },
    noise: { attack: 0.0003, bodyTau: 0.008, sustain: 0, brightTau: INF, release: 0.05, damped: false },
  };
  // Partials (harmonic of the table frequency, amplitude) of each layer (tables.rs `build`).
  const saw = [];
  for (let k = 1; k <= 256; k++) saw.push([k, 1 / Math.pow(k, 1.15)]);
  const TIMBRES = {
    sine: { body: [[1, 1]], bright: null, ratio: 1 },
    vibes: { body: [[1, 1]], bright: [[4, 0.32], [10, 0.1]], ratio: 1 },
    marimba: { body: [[1, 1]], bright: [[4, 0.45], [10, 0.08]], ratio: 1 },
    bell: { body: [[10, 0.3], [20, 1], [24, 0.45], [30, 0.25], [40, 0.35]],
      bright: [[50, 0.22], [53, 0.18], [60, 0.15], [83, 0.12], [109, 0.08]], ratio: 1 / 20 },
    string: { body: saw, bright: null, ratio: 1 },
  };

  // Equal loudness (loudness.rs): +3 dB an octave below 1 kHz (at most 12), +3 dB an octave
  // above 4 kHz (at most 9).
  function loudness(hz) {
    if (!(hz > 0) || !Number.isFinite(hz)) return 1;
    const below = Math.max(0, Math.log2(1000 / hz));
    const above = Math.max(0, Math.log2(hz / 4000));
    return Math.pow(10, (Math.min(3 * below, 12) + Math.min(3 * above, 9)) / 20);
  }

  // One scale for both layers: their sum peaks at 1.
  function peak(partials) {
    let top = 0;
    for (let i = 0; i < 4096; i++) {
      const x = (2 * Math.PI * i) / 4096;
      let v = 0;
      for (const [h, a] of partials) v += a * Math.sin(h * x);
      top = Math.max(top, Math.abs(v));
    }
    return top || 1;
  }

  function Synth(ctx, destination) {
    const waves = {};
    for (const [voice, t] of Object.entries(TIMBRES)) {
      const scale = 1 / peak(t.body.concat(t.bright || []));
      const wave = (partials) => {
        const n = Math.max(...partials.map((p) => p[0])) + 1;
        const real = new Float32Array(n), imag = new Float32Array(n);
        for (const [h, a] of partials) imag[h] = a * scale;
        return ctx.createPeriodicWave(real, imag, { disableNormalization: true });
      };
      waves[voice] = { body: wave(t.body), bright: t.bright ? wave(t.bright) : null, ratio: t.ratio };
    }
    const cosine = ctx.createPeriodicWave(new Float32Array([0, 1]), new Float32Array([0, 0]),
      { disableNormalization: true });
    // Deterministic white noise, as the synthesiser's generator is.
    const noise = ctx.createBuffer(1, ctx.sampleRate, ctx.sampleRate);
    {
      const d = noise.getChannelData(0);
      let r = 0x9e3779b9;
      for (let i = 0; i < d.length; i++) {
        r ^= r << 13; r >>>= 0; r ^= r >>> 17; r ^= r << 5; r >>>= 0;
        d[i] = (r / 4294967296) * 2 - 1;
      }
    }

    // A look-ahead limiter is approximated by a fast, hard compressor under the ceiling.
    const limiter = ctx.createDynamicsCompressor();
    limiter.threshold.value = -1; limiter.knee.value = 0; limiter.ratio.value = 20;
    limiter.attack.value = 0.002; limiter.release.value = 0.1;
    const master = ctx.createGain();
    master.connect(limiter); limiter.connect(destination);
    const channels = [];
    for (let c = 0; c < CHANNELS; c++) {
      const gain = ctx.createGain();
      const pan = ctx.createStereoPanner();
      gain.connect(pan); pan.connect(master);
      channels.push({ voice: "sine", gain, pan, volume: 1, mute: false, held: [] });
    }

    // A note: its oscillators and envelopes, from `t`; `off` releases it at a time.
    function note(voice, hz, volume, t, out) {
      const s = SPECS[voice] || SPECS.sine;
      const nodes = [];
      const level = ctx.createGain();
      level.gain.value = volume * loudness(hz) * VOICE_HEADROOM;
      level.connect(out);
      const envelope = (target, tau, into) => {
        const env = ctx.createGain();
        env.gain.setValueAtTime(0, t);
        env.gain.linearRampToValueAtTime(1, t + s.attack);
        if (tau !== INF) env.gain.setTargetAtTime(target, t + s.attack, tau);
        env.connect(into);
        return env;
      };
      let ends = INF;
      const envs = [];
      if (voice === "noise") {
        const src = ctx.createBufferSource();
        src.buffer = noise; src.loop = true;
        const fc = Math.min(Math.max(hz, 20), 0.45 * ctx.sampleRate);
        const band = ctx.createBiquadFilter();
        band.type = "bandpass"; band.frequency.value = fc; band.Q.value = 1.5;
        const rms = Math.sqrt(1 / 3) * Math.sqrt(Math.min(1, (Math.PI * fc) / (1.5 * ctx.sampleRate)));
        const norm = ctx.createGain(); norm.gain.value = 0.3 / rms;
        const env = envelope(0, s.bodyTau, level);
        src.connect(band); band.connect(norm); norm.connect(env);
        src.start(t);
        nodes.push(src); envs.push(env);
        ends = t + s.attack + s.bodyTau * LN_80DB;
      } else {
        const w = waves[voice] || waves.sine;
        const f = hz * w.ratio;
        const layers = [[w.body, s.sustain, s.bodyTau], [w.bright, 0, s.brightTau]];
        for (const [wave, sustain, tau] of layers) {
          if (!wave || (tau === INF && wave === w.bright)) continue;
          const osc = ctx.createOscillator();
          osc.setPeriodicWave(wave);
          osc.frequency.value = f;
          let into = level;
          if (s.tremoloDepth && wave === w.body) {
            // 1 - d/2 (1 - cos): full at the start.
            const trem = ctx.createGain();
            trem.gain.value = 1 - s.tremoloDepth / 2;
            const lfo = ctx.createOscillator();
            lfo.setPeriodicWave(cosine); lfo.frequency.value = s.tremoloHz;
            const depth = ctx.createGain(); depth.gain.value = s.tremoloDepth / 2;
            lfo.connect(depth); depth.connect(trem.gain); trem.connect(level);
            lfo.start(t); nodes.push(lfo);
            into = trem;
          }
          if (s.vibratoDepth) {
            const lfo = ctx.createOscillator();
            lfo.frequency.value = s.vibratoHz;
            const depth = ctx.createGain();
            depth.gain.setValueAtTime(0, t + s.vibratoDelay);
            depth.gain.linearRampToValueAtTime(f * s.vibratoDepth, t + s.vibratoDelay + 0.4);
            lfo.connect(depth); depth.connect(osc.frequency);
            lfo.start(t); nodes.push(lfo);
          }
          envs.push(envelope(sustain, tau, into));
          osc.connect(envs[envs.length - 1]);
          osc.start(t);
          nodes.push(osc);
        }
        if (s.sustain === 0) ends = t + s.attack + Math.max(s.bodyTau, s.brightTau === INF ? 0 : s.brightTau) * LN_80DB;
      }
      const stop = (at) => { for (const n of nodes) { try { n.stop(at); } catch (e) { /* stopped */ } } };
      if (ends !== INF) stop(ends);
      return {
        hz, level,
        // Key-up: a damped voice falls 80 dB in its release time; the others ring out.
        off(at) {
          if (!s.damped) return;
          for (const env of envs) {
            env.gain.cancelAndHoldAtTime(at);
            env.gain.setTargetAtTime(0, at, s.release / LN_80DB);
          }
          stop(Math.min(ends, at + s.release * 1.5));
        },
      };
    }

    const clamp = (c) => Math.min(Math.max(Math.trunc(c), 0), CHANNELS - 1);
    return {
      // Plays `cmd` (a SoundCommand) at context time `t`; `scale` is trace seconds per
      // output second (the speed times the tempo), which a tone's duration is divided by.
      play(cmd, t, scale) {
        switch (cmd.op) {
          case "tone": {
            if (cmd.channel === null || cmd.channel === undefined) {
              const pan = ctx.createStereoPanner();
              pan.pan.value = Math.min(Math.max(cmd.pan, -1), 1);
              pan.connect(master);
              note(cmd.voice, cmd.hz, cmd.volume, t, pan).off(t + cmd.duration / scale);
            } else {
              const ch = channels[clamp(cmd.channel)];
              note(ch.voice, cmd.hz, cmd.volume, t, ch.gain).off(t + cmd.duration / scale);
            }
            break;
          }
          case "note-on": {
            const ch = channels[clamp(cmd.channel)];
            ch.held.push(note(ch.voice, cmd.hz, cmd.volume, t, ch.gain));
            break;
          }
          case "note-off": {
            const ch = channels[clamp(cmd.channel)];
            ch.held = ch.held.filter((n) => (n.hz === cmd.hz ? (n.off(t), false) : true));
            break;
          }
          case "note-volume": {
            const ch = channels[clamp(cmd.channel)];
            for (const n of ch.held) {
              if (cmd.hz === null || cmd.hz === undefined || n.hz === cmd.hz) {
                n.level.gain.setTargetAtTime(cmd.volume * loudness(n.hz) * VOICE_HEADROOM, t, 0.015);
              }
            }
            break;
          }
          case "channel": {
            const ch = channels[clamp(cmd.channel)];
            if (cmd.voice) ch.voice = cmd.voice;
            if (cmd.pan !== null && cmd.pan !== undefined) ch.pan.pan.setTargetAtTime(cmd.pan, t, 0.005);
            if (cmd.volume !== null && cmd.volume !== undefined) ch.volume = cmd.volume;
            if (cmd.mute !== null && cmd.mute !== undefined) ch.mute = cmd.mute;
            ch.gain.gain.setTargetAtTime(ch.mute ? 0 : ch.volume, t, 0.005);
            break;
          }
          case "master": master.gain.setTargetAtTime(cmd.volume, t, 0.01); break;
          // The paper's beep: a short bell.
          case "beep": {
            const pan = ctx.createStereoPanner();
            pan.connect(master);
            note("bell", 880, 0.5, t, pan).off(t + 0.15);
            break;
          }
          default: break; // tempo is the clock's (below)
        }
      },
    };
  }

  // Trace time to output seconds, as the WAV writer counts them: from `origin` (the first
  // record's time), at `speed`, re-anchored at each tempo change.
  function Clock(origin, speed) {
    let traceAnchor = origin, outAnchor = 0, tempo = 1;
    return {
      at(trace) { return Math.max(0, outAnchor + (trace - traceAnchor) / (speed * tempo)); },
      scale() { return speed * tempo; },
      take(cmd, at) {
        if (cmd.op === "tempo") {
          outAnchor = this.at(at); traceAnchor = at; tempo = cmd.factor;
        }
      },
    };
  }

  // Every sound of a recording rendered offline, at `speed`: the samples (stereo).
  async function render(sounds, origin, speed, sampleRate) {
    const clock = Clock(origin, speed);
    let end = 0;
    for (const s of sounds) end = Math.max(end, clock.at(s.at));
    const ctx = new OfflineAudioContext(2, Math.ceil((end + 2) * sampleRate), sampleRate);
    const synth = Synth(ctx, ctx.destination);
    const timing = Clock(origin, speed);
    for (const s of sounds) {
      timing.take(s.sound, s.at);
      synth.play(s.sound, timing.at(s.at), timing.scale());
    }
    return ctx.startRendering();
  }

  return { Synth, Clock, render };
})();
