//! Output: the table beside the seed's figures, JSON, CSV and SVG figures (plotters).

pub mod csv;
pub mod designs;
pub mod json;
pub mod link;
pub mod notes;
pub mod plots;
pub mod steady;
pub mod summary;
pub mod table;
