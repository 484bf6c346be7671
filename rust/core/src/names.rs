//! Which tool names are accepted: one rule for registering a tool and for checking the name of a
//! call against a registry. The default is the strict one; OpenAI's and MCP's allow more, so the
//! tools real servers declare can register.

use crate::error::ErrorCode;

/// The longest tool name toolmend accepts under any rule, in characters: 128, MCP's limit (the
/// MCP specification allows tool names of 1 to 128 characters). OpenAI allows function names of
/// at most 64 characters, which the default and OpenAI rules keep ([`NameRule::max_len`]); under
/// MCP's rule a registry holds names up to this length, so everything that measures or suggests
/// names (the "did you mean" for an unknown one) must take names this long. Nothing accepts a
/// longer one.
pub const MAX_TOOL_NAME_LEN: usize = 128;

/// OpenAI's limit on function names, in characters: the default and OpenAI rules keep it.
const OPENAI_MAX_NAME_LEN: usize = 64;

/// A naming rule for tools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum NameRule {
    /// Letters, digits and `_`, at most 64 characters.
    #[default]
    Default,
    /// OpenAI's function names: also `-`, at most 64 characters.
    OpenAi,
    /// MCP's tool names: also `-` and `.`, at most 128 characters.
    Mcp,
}

impl NameRule {
    /// The rule named `name`: "default", "openai" or "mcp".
    pub fn from_name(name: &str) -> Option<NameRule> {
        match name {
            "default" => Some(NameRule::Default),
            "openai" => Some(NameRule::OpenAi),
            "mcp" => Some(NameRule::Mcp),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            NameRule::Default => "default",
            NameRule::OpenAi => "openai",
            NameRule::Mcp => "mcp",
        }
    }

    /// The longest name, in characters: OpenAI's 64 under the default and OpenAI rules, MCP's
    /// [`MAX_TOOL_NAME_LEN`] under MCP's. No rule allows more than [`MAX_TOOL_NAME_LEN`].
    pub fn max_len(self) -> usize {
        match self {
            NameRule::Default | NameRule::OpenAi => OPENAI_MAX_NAME_LEN,
            NameRule::Mcp => MAX_TOOL_NAME_LEN,
        }
    }

    /// Whether a name may hold `c`.
    pub fn allows(self, c: char) -> bool {
        c.is_ascii_alphanumeric()
            || c == '_'
            || (c == '-' && self != NameRule::Default)
            || (c == '.' && self == NameRule::Mcp)
    }

    /// The characters allowed, as a message says them.
    pub fn characters(self) -> &'static str {
        match self {
            NameRule::Default => "letters, digits and '_'",
            NameRule::OpenAi => "letters, digits, '_' and '-'",
            NameRule::Mcp => "letters, digits, '_', '-' and '.'",
        }
    }

    /// Checks a call's name in the order of the pipeline: empty (TLP-002), a character the rule
    /// does not allow (TLP-003), too long (TLP-005).
    pub fn check(self, name: &str) -> Result<(), (ErrorCode, String)> {
        if name.trim().is_empty() {
            return Err((
                ErrorCode::EmptyName,
                "Function name is required: the name is empty".into(),
            ));
        }
        if let Some(bad) = name.chars().find(|&c| !self.allows(c)) {
            return Err((
                ErrorCode::InvalidName,
                format!(
                    "Function name has the character {bad:?}; only {} are allowed",
                    self.characters()
                ),
            ));
        }
        let len = name.chars().count();
        if len > self.max_len() {
            return Err((
                ErrorCode::NameTooLong,
                format!(
                    "Function name is {len} characters long; at most {} are allowed",
                    self.max_len()
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_allows_its_characters_and_length() {
        let code = |rule: NameRule, name: &str| rule.check(name).err().map(|e| e.0);
        assert_eq!(code(NameRule::Default, "read_file"), None);
        assert_eq!(
            code(NameRule::Default, "read-file"),
            Some(ErrorCode::InvalidName)
        );
        assert_eq!(code(NameRule::OpenAi, "read-file"), None);
        assert_eq!(
            code(NameRule::OpenAi, "fs.read"),
            Some(ErrorCode::InvalidName)
        );
        assert_eq!(code(NameRule::Mcp, "fs.read-file_2"), None);
        assert_eq!(code(NameRule::Mcp, "fs/read"), Some(ErrorCode::InvalidName));
        assert_eq!(
            code(NameRule::OpenAi, &"a".repeat(65)),
            Some(ErrorCode::NameTooLong)
        );
        assert_eq!(code(NameRule::Mcp, &"a".repeat(128)), None);
        assert_eq!(
            code(NameRule::Mcp, &"a".repeat(129)),
            Some(ErrorCode::NameTooLong)
        );
        assert_eq!(code(NameRule::Mcp, " "), Some(ErrorCode::EmptyName));
        for rule in [NameRule::Default, NameRule::OpenAi, NameRule::Mcp] {
            assert_eq!(NameRule::from_name(rule.as_str()), Some(rule));
        }
    }

    #[test]
    fn the_longest_name_any_rule_takes_is_the_one_limit() {
        let rules = [NameRule::Default, NameRule::OpenAi, NameRule::Mcp];
        assert_eq!(
            rules.map(NameRule::max_len).iter().max(),
            Some(&MAX_TOOL_NAME_LEN)
        );
        assert_eq!(MAX_TOOL_NAME_LEN, 128);
    }
}
