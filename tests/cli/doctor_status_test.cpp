// `loopr doctor`'s check statuses (issue 44): an enum in the checks, the same words as before in
// `doctor --json` ("status").
#include <gtest/gtest.h>

#include <string>

#include "cli/doctor_status.hpp"

namespace loopr::cli {
namespace {

TEST(DoctorStatusTest, EachStatusIsWrittenAsTheWordDoctorJsonAlwaysHad) {
  EXPECT_EQ(std::string(to_string(CheckStatus::ok)), "ok");
  EXPECT_EQ(std::string(to_string(CheckStatus::fail)), "fail");
  EXPECT_EQ(std::string(to_string(CheckStatus::skip)), "skip");
  static_assert(std::size(kCheckStatusTexts) == 3, "one word per status");
}

}  // namespace
}  // namespace loopr::cli
