//! Output: the table beside the seed's figures, JSON, CSV and SVG plots.

pub mod csv;
pub mod json;
pub mod link;
pub mod notes;
pub mod summary;
pub mod svg;
pub mod table;
