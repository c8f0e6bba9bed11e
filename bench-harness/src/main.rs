//! The benchmark matrix runner (filled in by the bench-harness work).

fn main() {
    println!("protolua-bench: the matrix is not built yet");
}
