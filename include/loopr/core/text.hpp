// Untrusted bytes as text: valid UTF-8 (what a command printed, a file the model wrote, a name in
// a worktree), cut on code point boundaries, and made safe to print on a person's terminal.
// The model and everything it runs are untrusted (DESIGN.md "Trust boundary"): their text is
// shown to people and sent in JSON, so it is made valid once where it enters, and shown with
// its control characters visible wherever it is printed.
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace loopr {

/// True when `text` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
/// above U+10FFFF).
bool is_valid_utf8(std::string_view text);

/// `text` as valid UTF-8: every byte that does not begin a well-formed sequence, and every
/// cut-off sequence, becomes U+FFFD (the replacement character), like Rust's
/// `String::from_utf8_lossy`. Valid text is returned unchanged.
std::string valid_utf8(std::string_view text);

/// The longest prefix of `text` no longer than `max_bytes` that does not end inside a UTF-8
/// sequence (for text that is valid UTF-8).
std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes);

/// How many bytes at the end of `text` begin a UTF-8 sequence that the next bytes may still
/// complete (0 when `text` ends on a boundary or in bytes that can never become valid): what a
/// filter of a byte stream holds back until more arrives.
std::size_t utf8_unfinished_tail(std::string_view text);

/// `text` for a terminal: valid UTF-8 (see `valid_utf8`); newlines and tabs kept (a CR LF pair
/// becomes a newline); every other C0 control shown in caret notation (`^[` for ESC, `^M` for a
/// lone CR, `^@` for NUL), DEL as `^?`, the C1 controls U+0080–U+009F (U+009B is a CSI) and the
/// bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069, which reorder what is
/// shown) as `<U+009B>`, the way `less` shows them. Nothing in the result can move the cursor,
/// change colours, set a title or the clipboard, or hide text. With `max_bytes`, a result longer
/// than that is cut to at most `max_bytes` bytes on a character boundary and "…" appended.
std::string terminal_text(std::string_view text, std::size_t max_bytes = std::string_view::npos);

/// A name (a file, a branch, a title) on one line: `terminal_text`, and newlines, tabs and
/// carriage returns shown too (`^J`, `^I`, `^M`), so a name can never forge a line of output.
std::string name_text(std::string_view text, std::size_t max_bytes = std::string_view::npos);

/// A copy of `value` with every string in it (keys too) passed through `terminal_text`: a
/// document from the daemon made safe before a command renders it for a person.
nlohmann::json terminal_json(const nlohmann::json& value);

/// A copy of `value` with every string in it made valid UTF-8 (`valid_utf8`), keys too.
nlohmann::json valid_utf8_json(const nlohmann::json& value);

/// `value.dump()` that never throws on text: compact, and any invalid UTF-8 that reached a
/// string is written as U+FFFD. Every dump of data that may hold the model's or a command's text
/// (the store, the wire, events, transcripts) goes through this.
std::string json_text(const nlohmann::json& value);

/// First non-empty line of `text`, at most `max_len` bytes (for summaries and commit messages).
std::string first_line(const std::string& text, std::size_t max_len = 120);

}  // namespace loopr
