//! The kinds of fault the engine mends, written once in one table.
//!
//! Each row gives the variant, its stable snake_case name (used in logs and in Python, so never
//! renamed) and a short description, which is also the variant's documentation. The enum,
//! `RepairKind::ALL`, `as_str` and `description` are all generated from the table, so they
//! cannot drift apart.

macro_rules! repair_kinds {
    ($($variant:ident => $name:literal, $description:literal;)*) => {
        /// The kinds of fault the engine mends. `as_str` is the stable name used in logs and
        /// Python; `description` says what was wrong and what the repair did.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum RepairKind {
            $(
                #[doc = $description]
                $variant,
            )*
        }

        impl RepairKind {
            /// Every kind, in declaration order.
            pub const ALL: [RepairKind; [$(stringify!($variant)),*].len()] =
                [$(RepairKind::$variant),*];

            /// The stable snake_case name of this kind.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(RepairKind::$variant => $name,)*
                }
            }

            /// What was wrong and what the repair did, in one sentence.
            pub fn description(self) -> &'static str {
                match self {
                    $(RepairKind::$variant => $description,)*
                }
            }
        }
    };
}

repair_kinds! {
    TrailingComma => "trailing_comma",
        "`,` before `}` or `]`, or at the end of a truncated container: removed.";
    ExtraComma => "extra_comma",
        "`,,` or `[,`: the extra comma is removed.";
    MissingClosingBrace => "missing_closing_brace",
        "An object left open: `}` added.";
    MissingClosingBracket => "missing_closing_bracket",
        "An array left open: `]` added.";
    MissingOpeningBrace => "missing_opening_brace",
        "`[\"key\": \"value\"]`: members written in an array with no braces: an object is \
         opened around them.";
    MismatchedCloser => "mismatched_closer",
        "`[1, 2}`: the wrong closer is replaced by the right one.";
    ExtraCloser => "extra_closer",
        "A `}` or `]` that closes nothing: dropped.";
    RedundantBrace => "redundant_brace",
        "`{{\"a\": 1}}` (templates double their braces): the inner pair is dropped.";
    SingleQuotes => "single_quotes",
        "`'text'`: rewritten with double quotes.";
    SpecialQuotes => "special_quotes",
        "`“text”`, `‘text’` or `` `text` ``: typographic quotes or backticks around a string, \
         rewritten with double quotes.";
    EscapedJson => "escaped_json",
        "`{\\\"a\\\": 1}`: JSON escaped once too often (a stringified string); unescaped, then \
         repaired. Later positions refer to the unescaped text.";
    UnquotedKey => "unquoted_key",
        "`{path: 1}`: the key is quoted.";
    UnquotedString => "unquoted_string",
        "`{\"name\": John}`: the value is quoted as a string.";
    TruncatedString => "truncated_string",
        "The input ends inside a string: the string is closed.";
    UnclosedString => "unclosed_string",
        "A string left without its closing quote before a closing fence, or before the closers \
         that end the input: closed there.";
    TruncatedLiteral => "truncated_literal",
        "The input ends inside `true`, `false` or `null`: the word is completed.";
    UnescapedQuotes => "unescaped_quotes",
        "`\"He said \"hi\"\"`: quotes that do not end the string are escaped.";
    ControlCharacter => "control_character",
        "A raw newline, tab or other control character inside a string: escaped.";
    InvalidEscape => "invalid_escape",
        "`\\x`, `\\'`, a bad `\\u` or a lone surrogate: rewritten to what it most likely meant.";
    Comment => "comment",
        "`//`, `/* */` and `#` comments: removed.";
    PythonLiteral => "python_literal",
        "`True`, `False`, `None` (or `TRUE`, `FALSE`, `NULL`): written as `true`, `false`, \
         `null`.";
    PythonContainer => "python_container",
        "`(1, 2)` and `{1, 2}` (a Python tuple or set): written as an array.";
    JsLiteral => "js_literal",
        "`undefined`, `NaN`, `Infinity`, `-Infinity`: written as `null` (strict JSON has no \
         such values).";
    InvalidNumber => "invalid_number",
        "`.5`, `+1`, `1.`, `1e`: mended; numbers that cannot be (`007`, `1.2.3`) become strings.";
    MissingComma => "missing_comma",
        "`{\"a\": 1 \"b\": 2}`: the comma is inserted.";
    MissingColon => "missing_colon",
        "`{\"a\" 1}`: the colon is inserted.";
    MissingValue => "missing_value",
        "`{\"a\": }` or `{\"a\"}`: the value is written as `null`.";
    UnexpectedCharacter => "unexpected_character",
        "A byte that fits nowhere in the grammar (`;` between members, `...` in an array, a \
         no-break space between tokens): dropped.";
    MarkdownFence => "markdown_fence",
        "```` ```json ```` fences around the value: removed.";
    SurroundingText => "surrounding_text",
        "Prose before or after the JSON value: removed.";
    ConcatenatedValues => "concatenated_values",
        "Several top-level values one after another: wrapped in one array, in order.";
    StringConcatenation => "string_concatenation",
        "`\"abc\" + \"def\"` (JavaScript string concatenation): joined into one string.";
    FunctionCall => "function_call",
        "`ObjectId(\"1\")`, `NumberLong(2)`, JSONP `callback(...)`: the call is replaced by its \
         argument.";
    ByteOrderMark => "byte_order_mark",
        "A leading UTF-8 byte order mark: removed.";
    InvalidUtf8 => "invalid_utf8",
        "Bytes that are not UTF-8: replaced with U+FFFD (positions still refer to the input).";
    RepeatedArguments => "repeated_arguments",
        "`{\"city\": \"Paris\"}{\"city\": \"Paris\"}`: a call's whole arguments sent again after \
         them (proxies re-send them in a closing stream chunk, or repeat them in a reply): the \
         repeats are dropped. Different objects one after another are never merged (TLP-004).";
    ToolName => "tool_name",
        "`DELETE_FILE` for the registered `delete_file`: a call's tool name in another case than \
         the registry's, given the registered name (the model's spelling stays in `raw_name`; \
         the position is 0, as the name is not in the arguments).";
}

impl RepairKind {
    /// The kind whose stable name is `name`.
    pub fn from_name(name: &str) -> Option<RepairKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }
}
