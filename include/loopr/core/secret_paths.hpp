// The places in a home directory that hold credentials (keys, tokens, logins): never made
// visible inside the sandbox, whoever asks (`sandbox.read_only` written by a person, or by
// `loopr init`'s toolchain detection).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace loopr {

/// The known secret locations, relative to a home: `.ssh`, `.aws`, `.config/gh`, `.netrc`,
/// `.npmrc`, `.docker`, `.git-credentials`, `.gnupg`, keychains and the like.
const std::vector<std::string>& secret_home_paths();

/// Secret files inside a toolchain's folder (`~/.cargo/credentials.toml`): that folder may be
/// listed, and the executor hides the file in it.
const std::vector<std::string>& masked_home_paths();

/// Why `written` (a `sandbox.read_only` entry: absolute, or `~/…`) must not be visible: it is a
/// secret location (anywhere: a `.ssh` folder under any home), lies inside one, contains one of
/// `home`'s (`~/.config` holds `~/.config/gh`), or is a whole home (`~`, `/home`, `/root`).
/// Empty when it may be shown. `home` may be empty (only the name checks then).
std::string secret_path_problem(std::string_view written, const std::filesystem::path& home);

}  // namespace loopr
