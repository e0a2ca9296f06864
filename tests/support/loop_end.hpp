// How a loop's run ended, the check most engine tests end with: the loop's status, the reason
// it ended and the words its status_reason gives the person.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include <loopr/core/end_reason.hpp>
#include <loopr/core/loop.hpp>

namespace loopr::testing {

/// `l` ended `status` for `reason`, and its status_reason says `says` (when `says` is given).
inline void expect_ended(const Loop& l, LoopStatus status, EndReason reason,
                         const std::string& says = {}) {
  EXPECT_EQ(l.status, status) << l.status_reason;
  EXPECT_EQ(l.end_reason, reason) << to_string(l.end_reason) << ": " << l.status_reason;
  if (!says.empty()) {
    EXPECT_NE(l.status_reason.find(says), std::string::npos) << l.status_reason;
  }
}

}  // namespace loopr::testing
