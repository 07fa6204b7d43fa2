//! `perftop export`: the live feed for Prometheus. Each interval's findings and metrics (the
//! names `dump --format openmetrics` uses) go to a node_exporter textfile (`--textfile DIR`,
//! replaced atomically) and/or are served on `/metrics` (`--listen ADDR:PORT`).
//!
//! The machinery: the page (`metrics`), the textfile (`textfile`) and the HTTP server (`http`).
//! The mode itself, the same `Reader` → `Assessor` pipeline as every other mode on the one
//! `Clock`, is `mode::export`; the HTTP server runs on threads of its own and only ever copies
//! the latest rendered page, so no scraper, slow or stuck, can delay a sample.

pub(crate) mod http;
mod metrics;
pub(crate) mod textfile;

pub use metrics::{Page, Renderer};
