// `loopr doctor`'s verdict on one check and its word in `doctor --json` (`"status"`). Made here,
// never read back: no other word can arrive.
#pragma once

#include <loopr/core/enum_texts.hpp>

namespace loopr::cli {

enum class CheckStatus { ok, fail, skip };

inline constexpr EnumText<CheckStatus> kCheckStatusTexts[] = {
    {CheckStatus::ok, "ok"}, {CheckStatus::fail, "fail"}, {CheckStatus::skip, "skip"}};

constexpr const char* to_string(CheckStatus status) { return text_of(kCheckStatusTexts, status); }

}  // namespace loopr::cli
