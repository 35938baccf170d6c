//! Output: the table beside the seed's figures, JSON, CSV and SVG plots.

pub mod csv;
pub mod designs;
pub mod json;
pub mod notes;
pub mod summary;
pub mod svg;
pub mod table;
