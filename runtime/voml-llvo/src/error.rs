//! Errors and warnings of the LLVO layer, as values the runtime can report.

use std::fmt;

use crate::{ImageId, OwnerId, ViewId};

/// Everything that can go wrong in the LLVO layer.
///
/// The same type serves for warnings (see [`crate::Llvo::take_warnings`]): a
/// warning is an error that was survived by clamping a value instead of
/// refusing the call.
#[derive(Debug, Clone, PartialEq)]
pub enum LlvoError {
    /// A view id that no live view has (never created, or closed).
    UnknownView(ViewId),
    /// A view name that no live view has.
    UnknownViewName(String),
    /// A view with this name exists already.
    DuplicateView(String),
    /// An image id that [`crate::Llvo::load_image`] never returned.
    UnknownImage(ImageId),
    /// An owner id that [`crate::Llvo::new_owner`] never returned.
    UnknownOwner(OwnerId),
    /// The world rectangle is empty or not finite.
    BadWorld([f64; 4]),
    /// A number that cannot be used (NaN, infinite, out of range).
    BadNumber {
        /// What the number was for, e.g. "line thickness".
        what: &'static str,
        /// The offending value.
        value: f64,
        /// What was done about it, e.g. "clamped to 0" or "primitive skipped".
        action: &'static str,
    },
    /// A view with exact undrawing outgrew the bound on what it keeps of what it shows:
    /// it undraws by painting over until it is cleared.
    ShownGivenUp {
        /// The view's name.
        view: String,
        /// The bound, in path segments.
        cap: usize,
    },
    /// A primitive could not be drawn for a reason other than one number.
    Skipped {
        /// Which primitive.
        primitive: &'static str,
        /// Why.
        reason: String,
    },
    /// Image bytes that are not a PNG, GIF or JPEG we can decode.
    ImageDecode(String),
    /// Encoding a snapshot failed.
    Encode(String),
    /// Reading or writing a file failed.
    Io {
        /// The file.
        path: String,
        /// The system's message.
        message: String,
    },
    /// The back end refused or failed an operation.
    Backend(String),
    /// The back end cannot do this at all (e.g. a snapshot of a remote page).
    Unsupported(&'static str),
    /// Warnings that were counted but not kept (too many since the last
    /// [`crate::Llvo::take_warnings`]).
    WarningsDropped(u64),
}

impl LlvoError {
    /// [`LlvoError::UnknownView`], built only where it is returned (`ok_or_else`): an error
    /// built on every look-up and dropped costs the drawing path a call per primitive.
    #[cold]
    pub(crate) fn unknown_view(id: ViewId) -> Self {
        LlvoError::UnknownView(id)
    }

    /// [`LlvoError::UnknownImage`], as [`LlvoError::unknown_view`].
    #[cold]
    pub(crate) fn unknown_image(id: ImageId) -> Self {
        LlvoError::UnknownImage(id)
    }

    /// [`LlvoError::UnknownOwner`], as [`LlvoError::unknown_view`].
    #[cold]
    pub(crate) fn unknown_owner(id: OwnerId) -> Self {
        LlvoError::UnknownOwner(id)
    }

    /// What a warning is about, without the value that caused it: warnings of one kind are
    /// told once, with the first value, and counted after.
    pub fn kind(&self) -> String {
        match self {
            LlvoError::BadNumber { what, action, .. } => format!("{what}: {action}"),
            other => other.to_string(),
        }
    }
}

impl fmt::Display for LlvoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LlvoError::UnknownView(id) => write!(f, "unknown view id {}", id.0),
            LlvoError::UnknownViewName(name) => write!(f, "unknown view \"{name}\""),
            LlvoError::DuplicateView(name) => write!(f, "a view named \"{name}\" exists already"),
            LlvoError::UnknownImage(id) => write!(f, "unknown image id {}", id.0),
            LlvoError::UnknownOwner(id) => write!(f, "unknown owner id {}", id.0),
            LlvoError::BadWorld(w) => write!(
                f,
                "bad world rectangle x0={} x1={} y0={} y1={}: needs finite numbers with x0 != x1 and y0 != y1",
                w[0], w[1], w[2], w[3]
            ),
            LlvoError::BadNumber { what, value, action } => {
                write!(f, "bad {what}: {value}; {action}")
            }
            LlvoError::ShownGivenUp { view, cap } => write!(
                f,
                "view `{view}` shows more than {cap} path segments: it undraws by painting over \
                 in its background colour (as undraw=\"paint\") until it is cleared"
            ),
            LlvoError::Skipped { primitive, reason } => write!(f, "{primitive} not drawn: {reason}"),
            LlvoError::ImageDecode(msg) => write!(f, "cannot decode image: {msg}"),
            LlvoError::Encode(msg) => write!(f, "cannot encode snapshot: {msg}"),
            LlvoError::Io { path, message } => write!(f, "{path}: {message}"),
            LlvoError::Backend(msg) => write!(f, "back end: {msg}"),
            LlvoError::Unsupported(what) => write!(f, "this back end cannot {what}"),
            LlvoError::WarningsDropped(n) => write!(f, "{n} more warnings were not kept"),
        }
    }
}

impl std::error::Error for LlvoError {}
