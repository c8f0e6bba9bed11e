//! protolua (skeleton).
