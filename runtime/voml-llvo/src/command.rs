//! The back-end interface as values: every call the LLVO core makes of a [`Backend`] is a
//! [`Command`] that can be serialised (JSON, one per line), sent to another thread or a page,
//! recorded and replayed into any other back end with [`Command::apply`].

use serde::{Deserialize, Serialize};

use crate::backend::{Backend, BackendEvent, DrawCmd, Mark, PxRemap, RgbaPixels, Status};
use crate::color::Color;
use crate::error::LlvoError;
use crate::geom::PxRect;
use crate::{ImageId, ViewId};

/// One call of the [`Backend`] interface (apart from the queries: snapshots, depth,
/// position, events), as a plain value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Command {
    /// [`Backend::create_surface`].
    CreateSurface {
        /// The view.
        view: ViewId,
        /// Its title.
        title: String,
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
        /// Its background colour.
        background: Color,
    },
    /// [`Backend::resize_surface`].
    ResizeSurface {
        /// The view.
        view: ViewId,
        /// New width in pixels.
        width: u32,
        /// New height in pixels.
        height: u32,
        /// Its background colour.
        background: Color,
    },
    /// [`Backend::destroy_surface`].
    DestroySurface {
        /// The view.
        view: ViewId,
    },
    /// [`Backend::add_image`].
    AddImage {
        /// The image's id.
        image: ImageId,
        /// Its pixels.
        pixels: RgbaPixels,
    },
    /// [`Backend::draw`].
    Draw {
        /// The view.
        view: ViewId,
        /// What to draw.
        cmd: DrawCmd,
    },
    /// [`Backend::draw_owned`].
    DrawOwned {
        /// The view.
        view: ViewId,
        /// Whose frame it belongs to.
        mark: Mark,
        /// What to draw.
        cmd: DrawCmd,
    },
    /// [`Backend::undraw`].
    Undraw {
        /// The frame to remove.
        mark: Mark,
        /// How a raster erases it.
        erase: Vec<(ViewId, DrawCmd)>,
    },
    /// [`Backend::remap_area`].
    RemapArea {
        /// The view.
        view: ViewId,
        /// The pixels that move.
        area: PxRect,
        /// Old position to new.
        map: PxRemap,
        /// Colour of what has no source.
        fill: Color,
    },
    /// [`Backend::begin_buffer`].
    BeginBuffer {
        /// The view.
        view: ViewId,
    },
    /// [`Backend::flush`].
    Flush {
        /// The view.
        view: ViewId,
    },
    /// [`Backend::present`].
    Present {
        /// The view.
        view: ViewId,
    },
    /// [`Backend::status`].
    Status {
        /// Where the run stands.
        status: Status,
    },
}

impl Command {
    /// Makes the call this command stands for on `backend`.
    pub fn apply(&self, backend: &mut dyn Backend) -> Result<(), LlvoError> {
        match self {
            Command::CreateSurface {
                view,
                title,
                width,
                height,
                background,
            } => backend.create_surface(*view, title, *width, *height, *background),
            Command::ResizeSurface {
                view,
                width,
                height,
                background,
            } => backend.resize_surface(*view, *width, *height, *background),
            Command::DestroySurface { view } => {
                backend.destroy_surface(*view);
                Ok(())
            }
            Command::AddImage { image, pixels } => backend.add_image(*image, pixels),
            Command::Draw { view, cmd } => backend.draw(*view, cmd),
            Command::DrawOwned { view, mark, cmd } => backend.draw_owned(*view, *mark, cmd),
            Command::Undraw { mark, erase } => backend.undraw(*mark, erase),
            Command::RemapArea {
                view,
                area,
                map,
                fill,
            } => {
                // A back end that cannot resample clears instead, as the core would have.
                if !backend.remap_area(*view, *area, *map, *fill)? {
                    backend.draw(
                        *view,
                        &DrawCmd::Clear {
                            rect: *area,
                            color: *fill,
                        },
                    )?;
                }
                Ok(())
            }
            Command::BeginBuffer { view } => backend.begin_buffer(*view),
            Command::Flush { view } => backend.flush(*view),
            Command::Present { view } => backend.present(*view),
            Command::Status { status } => {
                backend.status(status);
                Ok(())
            }
        }
    }
}

impl Command {
    /// Moves every view, image and owner this command names by `by` (view `v` becomes
    /// `v + by`, and so on): so that several visual objects, each numbering its own from 0,
    /// can draw through one device.
    pub fn shift_ids(&mut self, by: u32) {
        let view = |v: &mut ViewId| v.0 = v.0.wrapping_add(by);
        let image = |cmd: &mut DrawCmd| {
            if let DrawCmd::Image { image, .. } = cmd {
                image.0 = image.0.wrapping_add(by);
            }
        };
        let mark = |m: &mut Mark| m.owner.0 = m.owner.0.wrapping_add(by);
        match self {
            Command::CreateSurface { view: v, .. }
            | Command::ResizeSurface { view: v, .. }
            | Command::DestroySurface { view: v }
            | Command::RemapArea { view: v, .. }
            | Command::BeginBuffer { view: v }
            | Command::Flush { view: v }
            | Command::Present { view: v } => view(v),
            Command::AddImage { image: i, .. } => i.0 = i.0.wrapping_add(by),
            Command::Draw { view: v, cmd } => {
                view(v);
                image(cmd);
            }
            Command::DrawOwned {
                view: v,
                mark: m,
                cmd,
            } => {
                view(v);
                mark(m);
                image(cmd);
            }
            Command::Undraw { mark: m, erase } => {
                mark(m);
                for (v, cmd) in erase {
                    view(v);
                    image(cmd);
                }
            }
            Command::Status { .. } => {}
        }
    }
}

/// The calls of [`Backend`] that change what is drawn, except `remap_area` and `present`
/// (which each back end answers its own way), written as the [`Command`]s they stand for:
/// in an `impl Backend for T`, `calls_as_commands!();` gives `create_surface`,
/// `resize_surface`, `destroy_surface`, `add_image`, `draw`, `draw_bounded`, `draw_owned`, `undraw`,
/// `begin_buffer` and `flush`, each handing its command to `T`'s own
/// `fn take_command(&mut self, command: Command) -> Result<(), LlvoError>`. For back ends
/// made of commands (the window's, the page's, [`Recorder`]): each call becomes its command in
/// this one place, and [`Command::apply`] is the way back.
#[macro_export]
macro_rules! calls_as_commands {
    () => {
        fn create_surface(
            &mut self,
            view: $crate::ViewId,
            title: &str,
            width: u32,
            height: u32,
            background: $crate::Color,
        ) -> Result<(), $crate::LlvoError> {
            self.take_command($crate::Command::CreateSurface {
                view,
                title: title.to_string(),
                width,
                height,
                background,
            })
        }

        fn resize_surface(
            &mut self,
            view: $crate::ViewId,
            width: u32,
            height: u32,
            background: $crate::Color,
        ) -> Result<(), $crate::LlvoError> {
            self.take_command($crate::Command::ResizeSurface {
                view,
                width,
                height,
                background,
            })
        }

        fn destroy_surface(&mut self, view: $crate::ViewId) {
            // Destroying a view there is not is no error.
            let _ = self.take_command($crate::Command::DestroySurface { view });
        }

        fn add_image(
            &mut self,
            image: $crate::ImageId,
            pixels: &$crate::RgbaPixels,
        ) -> Result<(), $crate::LlvoError> {
            self.take_command($crate::Command::AddImage {
                image,
                pixels: pixels.clone(),
            })
        }

        fn draw(
            &mut self,
            view: $crate::ViewId,
            cmd: &$crate::DrawCmd,
        ) -> Result<(), $crate::LlvoError> {
            self.take_command($crate::Command::Draw {
                view,
                cmd: cmd.clone(),
            })
        }

        /// The command handed over becomes the message as it is, without a copy.
        fn draw_bounded(
            &mut self,
            view: $crate::ViewId,
            cmd: $crate::DrawCmd,
            _bounds: $crate::PxRect,
        ) -> Result<(), $crate::LlvoError> {
            self.take_command($crate::Command::Draw { view, cmd })
        }

        fn draw_owned(
            &mut self,
            view: $crate::ViewId,
            mark: $crate::Mark,
            cmd: &$crate::DrawCmd,
        ) -> Result<(), $crate::LlvoError> {
            self.take_command($crate::Command::DrawOwned {
                view,
                mark,
                cmd: cmd.clone(),
            })
        }

        fn undraw(
            &mut self,
            mark: $crate::Mark,
            erase: &[($crate::ViewId, $crate::DrawCmd)],
        ) -> Result<(), $crate::LlvoError> {
            self.take_command($crate::Command::Undraw {
                mark,
                erase: erase.to_vec(),
            })
        }

        fn begin_buffer(&mut self, view: $crate::ViewId) -> Result<(), $crate::LlvoError> {
            self.take_command($crate::Command::BeginBuffer { view })
        }

        fn flush(&mut self, view: $crate::ViewId) -> Result<(), $crate::LlvoError> {
            self.take_command($crate::Command::Flush { view })
        }
    };
}

/// A back end that hands every call to `inner` and a copy of it, as a [`Command`], to a
/// listener: for recording a run's drawing, streaming it to a page, or tests.
pub struct Recorder<B: Backend> {
    inner: B,
    listener: Box<dyn FnMut(&Command) + Send>,
}

impl<B: Backend> Recorder<B> {
    /// Forwards to `inner`, telling `listener` of every command first.
    pub fn new(inner: B, listener: impl FnMut(&Command) + Send + 'static) -> Recorder<B> {
        Recorder {
            inner,
            listener: Box::new(listener),
        }
    }

    /// The back end the calls are forwarded to.
    pub fn inner(&self) -> &B {
        &self.inner
    }

    fn tell(&mut self, command: Command) {
        (self.listener)(&command);
    }

    /// Tells the listener of `command`, then carries it out on `inner`.
    fn take_command(&mut self, command: Command) -> Result<(), LlvoError> {
        (self.listener)(&command);
        command.apply(&mut self.inner)
    }
}

impl<B: Backend> Backend for Recorder<B> {
    crate::calls_as_commands!();

    fn remap_area(
        &mut self,
        view: ViewId,
        area: PxRect,
        map: PxRemap,
        fill: Color,
    ) -> Result<bool, LlvoError> {
        let done = self.inner.remap_area(view, area, map, fill)?;
        // What the core does next when the inner back end cannot resample (a clear) is
        // recorded as its own command; a replay must not resample then.
        if done {
            self.tell(Command::RemapArea {
                view,
                area,
                map,
                fill,
            });
        }
        Ok(done)
    }

    fn present(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.tell(Command::Present { view });
        self.inner.present(view)
    }

    fn snapshot(&mut self, view: ViewId) -> Result<RgbaPixels, LlvoError> {
        self.inner.snapshot(view)
    }

    fn depth(&self) -> u32 {
        self.inner.depth()
    }

    fn position(&self, view: ViewId) -> (i32, i32) {
        self.inner.position(view)
    }

    fn poll_events(&mut self) -> Vec<BackendEvent> {
        self.inner.poll_events()
    }

    fn status(&mut self, status: &Status) {
        self.tell(Command::Status {
            status: status.clone(),
        });
        self.inner.status(status)
    }

    fn answer(&mut self, to: u64, outcome: Result<(), &str>) {
        self.inner.answer(to, outcome)
    }

    fn interactive(&self) -> bool {
        self.inner.interactive()
    }
}
