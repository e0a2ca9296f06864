// File helpers shared by the tools: bounded reads, binary detection, atomic writes.
#pragma once

#include <filesystem>
#include <string>

#include <loopr/core/result.hpp>

namespace loopr::tools {

/// Reads a whole file of at most `max_bytes`; a larger or unreadable one is an error value.
Result<std::string> read_text_file(const std::filesystem::path& path, std::size_t max_bytes);

/// True when the first 8 KiB hold a NUL byte (what git and grep take as binary).
bool looks_binary(const std::string& text);

/// Writes via a temp file + rename (a crash never leaves half a file), creating parent folders
/// and keeping an existing file's permissions.
Result<void> write_file_atomically(const std::filesystem::path& path, const std::string& content);

}  // namespace loopr::tools
