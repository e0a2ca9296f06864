// A worktree root's folder and a Slurm job token end in path_hash(the repository's path): the
// names already on disk and in job names keep their values (lowercase hex, no leading zeros).
#include "exec/path_hash.hpp"

#include <gtest/gtest.h>

using loopr::exec::path_hash;

TEST(PathHashTest, NamesKeepTheirStoredValues) {
  EXPECT_EQ(path_hash("/home/me/project"), "26dd93dc");
  EXPECT_EQ(path_hash("/srv/x"), "e59d50de");
  EXPECT_EQ(path_hash("2400"), "2dee4bd");  // its low 32 bits start with a zero digit
}
