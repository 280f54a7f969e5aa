//! Replay control: the commands that drive a run record by record, whatever drives it (a
//! script read from `--control FILE` or standard input, or the keys of a window
//! ([`key_command`]).
//!
//! ```text
//! pause             stop taking records (in a script: nothing; a script pauses between commands)
//! resume            take records to the end of the input
//! step [N]          take N records (1)
//! step-to EVENT     take records up to and including the next one of the declared event EVENT
//! until T           take every record with a timestamp of at most T
//! seek T            leave the visual object exactly as after every record with a timestamp of
//!                   at most T, going back if need be (by running again from the start);
//!                   `seek start`: as before the first record
//! back              go back one moment: as after every record stamped before the last one
//! speed F           from now on, F trace seconds per wall second (0 or `max`: as fast as possible)
//! snapshot NAME     write each view's picture as NAME-VIEW.png
//! set NAME VALUE    set control structure NAME to VALUE, written as JSON (`3`, `0.5`, `true`,
//!                   `"text"`, `[1, 2]`), as `--dump-state` writes it; a value that is not of
//!                   the structure's type is refused and nothing changes
//! ```
//!
//! Blank lines and lines starting with `#` are skipped. When the commands run out, the run
//! ends where it stands and writes its outputs as at the end of its input.

use std::io::BufRead;

/// One replay command.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Stop taking records.
    Pause,
    /// Take records to the end of the input.
    Resume,
    /// Take this many records.
    Step(u64),
    /// Take records up to and including the next one of this declared event.
    StepTo(String),
    /// Take every record stamped at most this.
    Until(f64),
    /// Be exactly as after every record stamped at most this.
    Seek(f64),
    /// Go back one moment: be as after every record stamped before the last one's time.
    Back,
    /// Trace seconds per wall second; `None`: as fast as possible.
    Speed(Option<f64>),
    /// Write every view's picture under this name.
    Snapshot(String),
    /// Set a control structure to a value (JSON), as the user's edit.
    Set(String, serde_json::Value),
}

impl Command {
    /// Reads one command line; `Ok(None)` for a blank or comment line.
    pub fn parse(line: &str) -> Result<Option<Command>, String> {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return Ok(None);
        }
        let mut words = line.split_whitespace();
        let verb = words.next().unwrap_or("");
        if verb == "set" {
            return set(line["set".len()..].trim_start()).map(Some);
        }
        let arg = words.next();
        if let Some(extra) = words.next() {
            return Err(format!(
                "`{verb}` takes at most one argument; `{extra}` is one too many"
            ));
        }
        let time = |what: &str| -> Result<f64, String> {
            let a = arg.ok_or_else(|| format!("`{verb}` needs {what}"))?;
            a.parse::<f64>()
                .ok()
                .filter(|t| t.is_finite())
                .ok_or_else(|| format!("`{verb}` needs {what}, found `{a}`"))
        };
        let none = |c: Command| -> Result<Option<Command>, String> {
            match arg {
                None => Ok(Some(c)),
                Some(a) => Err(format!("`{verb}` takes no argument, found `{a}`")),
            }
        };
        match verb {
            "pause" => none(Command::Pause),
            "resume" => none(Command::Resume),
            "step" => match arg {
                None => Ok(Some(Command::Step(1))),
                Some(a) => a
                    .parse::<u64>()
                    .map(|n| Some(Command::Step(n)))
                    .map_err(|_| format!("`step` needs a number of records, found `{a}`")),
            },
            "step-to" => arg
                .map(|e| Some(Command::StepTo(e.to_string())))
                .ok_or_else(|| "`step-to` needs the name of a declared event".to_string()),
            "until" => time("a trace time").map(|t| Some(Command::Until(t))),
            "seek" if arg == Some("start") => Ok(Some(Command::Seek(f64::NEG_INFINITY))),
            "seek" => time("a trace time or `start`").map(|t| Some(Command::Seek(t))),
            "back" => none(Command::Back),
            "speed" => match arg {
                Some("max") => Ok(Some(Command::Speed(None))),
                _ => {
                    let f = time("a factor or `max`")?;
                    if f < 0.0 {
                        return Err(format!("`speed` needs a factor of 0 or more, found `{f}`"));
                    }
                    Ok(Some(Command::Speed((f > 0.0).then_some(f))))
                }
            },
            "snapshot" => {
                let name = arg.ok_or("`snapshot` needs a name for the pictures")?;
                let plain = name
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
                    && !name.starts_with('.');
                if !plain {
                    return Err(format!(
                        "`{name}` is not a plain name (letters, digits, `-`, `_`, `.`)"
                    ));
                }
                Ok(Some(Command::Snapshot(name.to_string())))
            }
            other => Err(format!(
                "unknown command `{other}` (commands: pause, resume, step [N], step-to EVENT, until T, seek T, back, speed F, snapshot NAME, set NAME VALUE)"
            )),
        }
    }
}

/// `set NAME VALUE`, from what follows `set`: the name is one word, the value the rest of the
/// line, in JSON.
fn set(rest: &str) -> Result<Command, String> {
    let (name, value) = rest
        .split_once(char::is_whitespace)
        .map(|(n, v)| (n, v.trim()))
        .unwrap_or((rest, ""));
    if name.is_empty() {
        return Err("`set` needs the name of a control structure and a value".into());
    }
    if value.is_empty() {
        return Err(format!(
            "`set {name}` needs a value (JSON: 3, 0.5, true, \"text\", [1, 2])"
        ));
    }
    serde_json::from_str(value)
        .map(|v| Command::Set(name.to_string(), v))
        .map_err(|e| format!("`set {name}`: `{value}` is not a JSON value ({e})"))
}

/// Commands with where they were written, read one at a time (so that a person can type
/// them while the run waits).
pub struct Commands {
    name: String,
    lines: Box<dyn Iterator<Item = std::io::Result<String>> + Send>,
    line: usize,
}

impl Commands {
    /// Commands from a file, or from standard input for `-`.
    pub fn open(path: &std::path::Path) -> std::io::Result<Commands> {
        let (name, lines): (String, Box<dyn Iterator<Item = _> + Send>) = if path.as_os_str() == "-"
        {
            (
                "-".into(),
                Box::new(std::io::BufReader::new(std::io::stdin()).lines()),
            )
        } else {
            (
                path.display().to_string(),
                Box::new(std::io::BufReader::new(std::fs::File::open(path)?).lines()),
            )
        };
        Ok(Commands {
            name,
            lines,
            line: 0,
        })
    }

    /// Commands from a text (for tests and shortcuts such as `--until`).
    pub fn from_text(name: &str, text: &str) -> Commands {
        let lines: Vec<std::io::Result<String>> = text.lines().map(|l| Ok(l.to_string())).collect();
        Commands {
            name: name.to_string(),
            lines: Box::new(lines.into_iter()),
            line: 0,
        }
    }
}

/// A command with where it was written (`NAME:LINE`), for messages about it.
#[derive(Clone, Debug, PartialEq)]
pub struct Located {
    /// Where the command was written.
    pub at: String,
    /// The command.
    pub command: Command,
}

impl Iterator for Commands {
    /// A command, or a message located at `NAME:LINE` for a line that is not one.
    type Item = Result<Located, String>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let line = match self.lines.next()? {
                Ok(l) => l,
                Err(e) => return Some(Err(format!("{}: {e}", self.name))),
            };
            self.line += 1;
            match Command::parse(&line) {
                Ok(Some(command)) => {
                    return Some(Ok(Located {
                        at: format!("{}:{}", self.name, self.line),
                        command,
                    }))
                }
                Ok(None) => continue,
                Err(e) => return Some(Err(format!("{}:{}: {e}", self.name, self.line))),
            }
        }
    }
}

/// The window's replay keys, for its help line.
pub const KEYS_HELP: &str = "space pause/resume · → step (shift: 100) · ← back · Home start · + faster · - slower · 1 real time · 0 max speed · s snapshot";

/// The replay command of a key pressed in a window (as [`voml_llvo::BackendEvent::Key`] names
/// it), given whether the replay is paused and its speed; `None` for a key that is the visual
/// object's.
pub fn key_command(key: &str, paused: bool, speed: Option<f64>) -> Option<Command> {
    Some(match key {
        " " | "Space" if paused => Command::Resume,
        " " | "Space" => Command::Pause,
        "ArrowRight" => Command::Step(1),
        "ArrowLeft" => Command::Back,
        // Back to before the first record.
        "Home" => Command::Seek(f64::NEG_INFINITY),
        "Shift+ArrowRight" => Command::Step(100),
        // As fast as possible is as fast as it gets.
        "+" | "=" => Command::Speed(speed.map(|s| (s * 2.0).min(MAX_KEY_SPEED))),
        // Slowing down from as fast as possible starts at real time.
        "-" => Command::Speed(Some(speed.map_or(1.0, |s| (s / 2.0).max(MIN_KEY_SPEED)))),
        // Numbered by the driver: snapshot-1, snapshot-2, ...
        "s" => Command::Snapshot("snapshot".into()),
        "1" => Command::Speed(Some(1.0)),
        "0" => Command::Speed(None),
        _ => return None,
    })
}

/// The speeds the keys stay between (trace seconds per wall second).
const MIN_KEY_SPEED: f64 = 1.0 / 1024.0;
const MAX_KEY_SPEED: f64 = 1_048_576.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_keys_are_replay_commands() {
        assert_eq!(key_command("Space", false, None), Some(Command::Pause));
        assert_eq!(key_command("Space", true, None), Some(Command::Resume));
        assert_eq!(
            key_command("ArrowRight", false, None),
            Some(Command::Step(1))
        );
        assert_eq!(
            key_command("+", false, Some(2.0)),
            Some(Command::Speed(Some(4.0)))
        );
        assert_eq!(key_command("+", false, None), Some(Command::Speed(None)));
        assert_eq!(
            key_command("-", false, None),
            Some(Command::Speed(Some(1.0)))
        );
        assert_eq!(
            key_command("-", false, Some(MIN_KEY_SPEED)),
            Some(Command::Speed(Some(MIN_KEY_SPEED)))
        );
        assert_eq!(
            key_command("0", true, Some(3.0)),
            Some(Command::Speed(None))
        );
        // The visual object's keys.
        assert_eq!(key_command("a", false, None), None);
        assert_eq!(key_command("Ctrl+Space", false, None), None);
    }

    #[test]
    fn commands_read_as_written() {
        let p = |s: &str| Command::parse(s);
        assert_eq!(p("step").unwrap(), Some(Command::Step(1)));
        assert_eq!(p("  step 25 ").unwrap(), Some(Command::Step(25)));
        assert_eq!(p("until 0.5").unwrap(), Some(Command::Until(0.5)));
        assert_eq!(p("seek 1e-3").unwrap(), Some(Command::Seek(0.001)));
        assert_eq!(
            p("seek start").unwrap(),
            Some(Command::Seek(f64::NEG_INFINITY))
        );
        assert_eq!(p("speed max").unwrap(), Some(Command::Speed(None)));
        assert_eq!(p("speed 0").unwrap(), Some(Command::Speed(None)));
        assert_eq!(p("speed 2").unwrap(), Some(Command::Speed(Some(2.0))));
        assert_eq!(
            p("step-to send").unwrap(),
            Some(Command::StepTo("send".into()))
        );
        assert_eq!(
            p("snapshot after-bcast").unwrap(),
            Some(Command::Snapshot("after-bcast".into()))
        );
        assert_eq!(
            p("set limit 0.01").unwrap(),
            Some(Command::Set("limit".into(), serde_json::json!(0.01)))
        );
        assert_eq!(
            p("set legend [\"a b\", 2]").unwrap(),
            Some(Command::Set("legend".into(), serde_json::json!(["a b", 2])))
        );
        assert_eq!(p("# a comment").unwrap(), None);
        assert_eq!(p("").unwrap(), None);
        for bad in [
            "jump 3",
            "step x",
            "until",
            "seek nan",
            "speed -1",
            "snapshot ../x",
            "pause now",
            "step 1 2",
            "set",
            "set limit",
            "set limit fast",
        ] {
            assert!(p(bad).is_err(), "{bad}");
        }
        let mut c = Commands::from_text("script", "step\n\nbogus\n");
        assert_eq!(
            c.next(),
            Some(Ok(Located {
                at: "script:1".into(),
                command: Command::Step(1)
            }))
        );
        let e = c.next().unwrap().unwrap_err();
        assert!(e.starts_with("script:3: unknown command `bogus`"), "{e}");
        assert_eq!(c.next(), None);
    }
}
