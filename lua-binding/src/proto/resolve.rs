//! Where `.proto` files come from: in-memory sources, then the import paths
//! on disk, then the well-known `google/protobuf/*.proto` built in.

use std::fmt;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use protox::Error;
use protox::file::{File, FileResolver, GoogleFileResolver};

/// A [`FileResolver`] over in-memory sources, include directories and the
/// built-in well-known files, in that order (as protoc: the first hit wins).
pub struct Resolver {
    sources: Vec<(String, String)>,
    includes: Vec<PathBuf>,
    google: GoogleFileResolver,
}

impl Resolver {
    /// A resolver over `sources` (name → text) and `includes`.
    pub fn new(sources: Vec<(String, String)>, includes: Vec<PathBuf>) -> Self {
        Resolver { sources, includes, google: GoogleFileResolver::new() }
    }
}

impl FileResolver for Resolver {
    fn resolve_path(&self, path: &Path) -> Option<String> {
        let as_name = path.to_str()?;
        if self.sources.iter().any(|(n, _)| n == as_name) {
            return Some(as_name.to_owned());
        }
        self.includes.iter().find_map(|inc| name_under(path, inc))
    }

    fn open_file(&self, name: &str) -> Result<File, Error> {
        if let Some((_, src)) = self.sources.iter().find(|(n, _)| n == name) {
            return from_source(name, src);
        }
        for inc in &self.includes {
            let path = inc.join(name);
            match std::fs::read(&path) {
                Ok(bytes) => {
                    return match String::from_utf8(bytes) {
                        Ok(src) => from_source(name, &src),
                        Err(e) => Err(Error::new(Plain(format!(
                            "{name}: the file is not valid UTF-8 (byte {})",
                            e.utf8_error().valid_up_to()
                        )))),
                    };
                }
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                // A directory of that name is no file: keep searching, as protoc.
                Err(_) if path.is_dir() => continue,
                Err(e) => return Err(Error::new(Plain(format!("{name}: cannot read {}: {e}", path.display())))),
            }
        }
        self.google.open_file(name)
    }
}

/// Parse `src` as the file `name`, refusing editions files with a plain
/// word (protox parses proto2 and proto3 only).
fn from_source(name: &str, src: &str) -> Result<File, Error> {
    if let Some((line, col)) = edition_statement(src) {
        return Err(Error::new(Plain(format!(
            "{name}:{line}:{col}: editions files are not supported by load_proto (its parser, protox, \
             reads proto2 and proto3 only): compile with protoc --include_imports \
             --descriptor_set_out=set.fds and load that with protolua.load"
        ))));
    }
    File::from_source(name, src)
}

/// The 1-based line and column of a leading `edition` statement, if the
/// first token of `src` (after whitespace and comments) is `edition`.
fn edition_statement(src: &str) -> Option<(usize, usize)> {
    let b = src.as_bytes();
    let (mut i, mut line, mut line_start) = (0, 1, 0);
    while i < b.len() {
        match b[i] {
            b'\n' => {
                i += 1;
                line += 1;
                line_start = i;
            }
            c if c.is_ascii_whitespace() => i += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    if b[i] == b'\n' {
                        line += 1;
                        line_start = i + 1;
                    }
                    i += 1;
                }
                i += 2;
            }
            _ => break,
        }
    }
    let rest = b.get(i..)?;
    let after = rest.get(7).copied().unwrap_or(b' ');
    (rest.starts_with(b"edition") && !(after.is_ascii_alphanumeric() || after == b'_'))
        .then(|| (line, src[line_start..i].chars().count() + 1))
}

/// The protobuf file name (`dir/file.proto`) of `path` relative to
/// `prefix`, ignoring `.` components; `None` when `path` is not under
/// `prefix` or the rest has `..` or is empty.
fn name_under(path: &Path, prefix: &Path) -> Option<String> {
    let mut it = path.components().filter(|c| *c != Component::CurDir);
    for p in prefix.components().filter(|c| *c != Component::CurDir) {
        if it.next()? != p {
            return None;
        }
    }
    let mut name = String::new();
    for c in it {
        let Component::Normal(s) = c else { return None };
        if !name.is_empty() {
            name.push('/');
        }
        name.push_str(s.to_str()?);
    }
    (!name.is_empty()).then_some(name)
}

/// An error whose text is already worded (`Debug` prints it as is).
struct Plain(String);

impl fmt::Debug for Plain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for Plain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Plain {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edition_found_after_comments() {
        assert_eq!(edition_statement("// hi\n/* x\n */  edition = \"2023\";"), Some((3, 6)));
        assert_eq!(edition_statement("syntax = \"proto3\";"), None);
        assert_eq!(edition_statement("editions = 1"), None);
    }

    #[test]
    fn names_under_prefixes() {
        let p = Path::new("./api/x/person.proto");
        assert_eq!(name_under(p, Path::new("api")).as_deref(), Some("x/person.proto"));
        assert_eq!(name_under(p, Path::new("vendor")), None);
        assert_eq!(name_under(Path::new("person.proto"), Path::new(".")).as_deref(), Some("person.proto"));
        assert_eq!(name_under(Path::new("../a.proto"), Path::new(".")), None);
    }
}
