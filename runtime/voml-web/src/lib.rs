//! The web back end of the low-level layer: the same compiled visual object drawn in a
//! browser. [`WebBackend`] carries out the LLVO core's commands on a raster of its own and
//! streams them, serialised ([`voml_llvo::Command`] JSON lines), through a [`Hub`] to every
//! page connected to the [`Server`] over a WebSocket; the page draws each view on a canvas.
//!
//! A page that joins late first gets the history: every command since the run began, or,
//! once that has grown beyond its limit, the compaction that replaced it (each view
//! created, the visual object's images, each view's current pixels as one image), then the
//! latest status. Carried out in order on a raster, the history gives the picture the run
//! shows now. Memory is bounded: the history by its limit (or twice its compacted size), a
//! page's queue by a number of batches (a page that falls behind is disconnected, and joins
//! again with the current picture), connections by a number.
//!
//! A [`Recording`] keeps a headless run's commands, by the trace time that drew them, and
//! writes them into the same page as one self-contained file that replays them.

mod backend;
mod hub;
mod record;
mod server;

pub use backend::WebBackend;
pub use hub::Hub;
pub use record::{Recording, SharedRecording, DEFAULT_RECORD_LIMIT};
pub use server::{needs_token, new_token, Server};

/// The default limit of the history, in bytes.
pub const DEFAULT_HISTORY: usize = 16 * 1024 * 1024;
