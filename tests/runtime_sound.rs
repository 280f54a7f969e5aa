//! Sound primitives: markup inside code becomes sound commands in trace time, with their
//! arguments checked, and pitch given as Hz or as a MIDI note number.

use voml_runtime::host::{SoundCommand, TimedSound};
use voml_runtime::{Config, Runtime};
use voml_trace::{Record, Value};

fn runtime(text: &str) -> Runtime {
    std::env::set_var("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"));
    let out = voml_compiler::compile_str(
        "sound.voml",
        text,
        &voml_compiler::MemoryFs::new(),
        &Default::default(),
    );
    let vo = out.vo.unwrap_or_else(|| {
        panic!(
            "{}",
            voml_compiler::diag::render(&out.db, &out.diagnostics, false)
        )
    });
    Runtime::headless(vo, Config::default()).expect("loads")
}

const SPEC: &str = r#"<voml><body><visual-object name="s">
  <event-declarations>
    <data-event name="send" rtype="entry" etype="-21"><data-field name="ts" type="real"/><data-field name="proc" type="int"/></data-event>
    <data-event name="recv" rtype="exit" etype="-51"><data-field name="ts" type="real"/><data-field name="proc" type="int"/></data-event>
  </event-declarations>
  <event-processing>
    <ep-component name="sounds" inputs="send.ts.proc recv.ts.proc">
      <input name="^0">
        <channel channel="^0/1" voice="vibes" pan="-0.5" mute="no"/>
        <tone note="(+ 60 ^0/1)" duration="0.1" voice="marimba" pan="(- ^0/1 1)"/>
        <note-on channel="^0/1" freq="(* 100 (+ 1 ^0/1))" volume="0.5"/>
      </input>
      <input name="^1">
        <note-volume channel="^1/1" volume="0.25"/>
        <note-off channel="^1/1" freq="(* 100 (+ 1 ^1/1))"/>
        <master volume="0.9"/>
        <beep/>
      </input>
    </ep-component>
  </event-processing>
</visual-object></body></voml>"#;

fn record(rtype: i64, etype: i64, ts: f64, proc: i64) -> Record {
    Record {
        line: 1,
        rtype,
        etype,
        fields: vec![Value::Real(ts), Value::Int(proc)],
    }
}

#[test]
fn sound_primitives_become_timed_commands() {
    let mut rt = runtime(SPEC);
    rt.process(&record(-3, -21, 1.5, 2), "t").unwrap();
    rt.process(&record(-4, -51, 2.25, 2), "t").unwrap();
    assert!(rt.faults().is_empty(), "{:?}", rt.faults());
    assert_eq!(rt.beeps(), vec![2.25]);
    let sounds = rt.take_sounds();
    let at = |t: f64, command: SoundCommand| TimedSound { at: t, command };
    let expected = vec![
        at(
            1.5,
            SoundCommand::Channel {
                channel: 2,
                voice: Some(voml_sound::Voice::Vibes),
                pan: Some(-0.5),
                volume: None,
                mute: Some(false),
            },
        ),
        at(
            1.5,
            SoundCommand::Tone {
                hz: 440.0 * 2f64.powf((62.0 - 69.0) / 12.0),
                duration: 0.1,
                volume: 0.8,
                pan: 1.0,
                voice: voml_sound::Voice::Marimba,
                channel: None,
            },
        ),
        at(
            1.5,
            SoundCommand::NoteOn {
                channel: 2,
                hz: 300.0,
                volume: 0.5,
            },
        ),
        at(
            2.25,
            SoundCommand::NoteVolume {
                channel: 2,
                hz: None,
                volume: 0.25,
            },
        ),
        at(
            2.25,
            SoundCommand::NoteOff {
                channel: 2,
                hz: 300.0,
            },
        ),
        at(2.25, SoundCommand::Master { volume: 0.9 }),
        at(2.25, SoundCommand::Beep),
    ];
    assert_eq!(sounds.len(), expected.len(), "{sounds:?}");
    for (got, want) in sounds.iter().zip(&expected) {
        match (&got.command, &want.command) {
            (SoundCommand::Tone { hz: a, .. }, SoundCommand::Tone { hz: b, .. }) => {
                assert!((a - b).abs() < 1e-9, "{a} vs {b}");
                let mut g = got.clone();
                if let SoundCommand::Tone { hz, .. } = &mut g.command {
                    *hz = *b;
                }
                assert_eq!(&g, want);
            }
            _ => assert_eq!(got, want),
        }
    }
    // Taken commands are gone.
    assert!(rt.take_sounds().is_empty());
}

#[test]
fn bad_sound_arguments_are_faults_at_the_primitive() {
    let text = SPEC.replace(r#"volume="0.5""#, r#"volume="(* 2 ^0/1)""#);
    let mut rt = runtime(&text);
    rt.process(&record(-3, -21, 1.5, 2), "t").unwrap();
    let fault = &rt.faults()[0];
    assert!(
        fault
            .message
            .contains("volume must be between 0 and 1, found 4"),
        "{}",
        fault.message
    );
    assert!(
        fault
            .location
            .as_deref()
            .unwrap()
            .starts_with("sound.voml:"),
        "{:?}",
        fault.location
    );
}

#[test]
fn a_pitch_is_required_once() {
    for (bad, message) in [
        (r#"<tone duration="1"/>"#, "`<tone>` needs a pitch"),
        (
            r#"<note-on channel="1" freq="1" note="2"/>"#,
            "`<note-on>` has both `freq` and `note`",
        ),
    ] {
        let text = SPEC.replace("<beep/>", bad);
        let out = voml_compiler::compile_str(
            "sound.voml",
            &text,
            &voml_compiler::MemoryFs::new(),
            &Default::default(),
        );
        assert!(out.vo.is_none());
        assert!(
            out.diagnostics.iter().any(|d| d.message == message),
            "{:?}",
            out.diagnostics
        );
    }
}

#[test]
fn mapping_helpers_and_voice_names_are_checked() {
    let text = r#"<voml><body><visual-object name="m">
      <event-declarations><data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/></data-event></event-declarations>
      <info-structures><variable name="probe" type="list"/></info-structures>
      <event-processing>
        <ep-component name="probe" inputs="e" infos="probe">
          <input name="^0">
            (set! $0 (map (lambda (x) (/ (round (* 100 x)) 100))
                          (list (meter->hz 0 100 400) (meter->hz 50 100 400) (meter->hz 100 100 400)
                                (quantize-hz 450 "major" 440) (quantize-hz 470 "whole-tone" 440)
                                (processor->hz 0 8) (processor->hz 7 8))))
          </input>
        </ep-component>
      </event-processing>
    </visual-object></body></voml>"#;
    let mut rt = runtime(text);
    rt.process(&record(-3, 1, 1.0, 0), "t").unwrap();
    assert!(rt.faults().is_empty(), "{:?}", rt.faults());
    // A log-scale meter: 0 % the low end, 50 % the geometric middle, 100 % the high end;
    // 450 Hz is nearest 440 Hz in A major, 470 Hz nearest B (493.88 Hz) in the whole-tone
    // scale on A; Trace2au's map spans 100 Hz to 3500 Hz.
    assert_eq!(
        rt.variable("probe").unwrap(),
        "(100.0 200.0 400.0 440.0 493.88 100.0 3500.0)"
    );

    // A literal voice that names none is refused by the compiler (E0045); one computed at
    // run time, by the runtime.
    let literal = SPEC.replace(r#"voice="marimba""#, r#"voice="kazoo""#);
    let out = voml_compiler::compile_str(
        "sound.voml",
        &literal,
        &voml_compiler::MemoryFs::new(),
        &Default::default(),
    );
    assert!(
        out.diagnostics
            .iter()
            .any(|d| d.code == voml_compiler::Code::UnknownVoice),
        "{:?}",
        out.diagnostics
    );
    let bad = SPEC.replace(
        r#"voice="marimba""#,
        r#"voice="(string-append &quot;ka&quot; &quot;zoo&quot;)""#,
    );
    let mut rt = runtime(&bad);
    rt.process(&record(-3, -21, 1.5, 2), "t").unwrap();
    assert!(
        rt.faults()[0].message.contains("unknown voice `kazoo`"),
        "{}",
        rt.faults()[0].message
    );
}
