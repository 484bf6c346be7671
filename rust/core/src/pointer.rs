//! JSON Pointers (RFC 6901), the paths of violations, of schema nodes and of values as they are
//! read: a key escaped as a pointer token and back, a child's pointer, and a `$ref` fragment
//! decoded. Plain strings: the empty pointer is the whole document, each token follows a `/`.
//!
//! Shared by the schema's checks, its graph and its reports (and by the walkers of values), so
//! that none of them needs another for this.

use std::borrow::Cow;

/// A key as a JSON Pointer token (RFC 6901): `~` as `~0`, `/` as `~1`.
pub(crate) fn escape_pointer(key: &str) -> Cow<'_, str> {
    if key.contains(['~', '/']) {
        key.replace('~', "~0").replace('/', "~1").into()
    } else {
        key.into()
    }
}

/// A JSON Pointer token as the key it stands for (the inverse of `escape_pointer`).
pub(crate) fn unescape_pointer(token: &str) -> Cow<'_, str> {
    if token.contains('~') {
        token.replace("~1", "/").replace("~0", "~").into()
    } else {
        token.into()
    }
}

/// The pointer of `key` (a member name or an index) under `pointer`.
pub(crate) fn child_pointer(pointer: &str, key: &str) -> String {
    let key = escape_pointer(key);
    let mut at = String::with_capacity(pointer.len() + 1 + key.len());
    at.push_str(pointer);
    at.push('/');
    at.push_str(&key);
    at
}

/// `%XX` escapes decoded (a malformed one is kept as written): a `$ref` fragment is a
/// percent-encoded pointer (`#/$defs/a%25b` is `/$defs/a%b`).
pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_escape_and_unescape() {
        for key in ["plain", "a/b", "a~b", "~1", "/~0/", ""] {
            assert_eq!(unescape_pointer(&escape_pointer(key)), key);
        }
        assert_eq!(escape_pointer("a~/b"), "a~0~1b");
        assert_eq!(child_pointer("/x", "a/b"), "/x/a~1b");
        assert_eq!(percent_decode("/$defs/a%25b%zz"), "/$defs/a%b%zz");
    }
}
