// The stable hash names things that are stored (worktree roots, Slurm job tokens, baseline meta
// keys) and cache keys: its values are pinned here, as FNV-1a 64 gives them, so no change of
// the code behind it renames what earlier loopr wrote.
#include <gtest/gtest.h>

#include <string>

#include <loopr/core/stable_hash.hpp>

using namespace loopr;

TEST(StableHashTest, GivesFnv1a64AndItsHexDigits) {
  EXPECT_EQ(stable_hash(""), kStableHashStart);
  EXPECT_EQ(stable_hash_hex(stable_hash("")), "14650fb0739d0383");
  EXPECT_EQ(stable_hash_hex(stable_hash(std::string("a\0b", 3))), "e02908510caa06f0");
  // Chained parts hash as their concatenation.
  EXPECT_EQ(stable_hash("b", stable_hash(std::string("a\0", 2))),
            stable_hash(std::string("a\0b", 3)));
  EXPECT_EQ(stable_hash_hex(0x2dee4bd, 8), "02dee4bd");
  EXPECT_EQ(stable_hash_hex(0xabcdef0123456789ULL, 4), "6789");
}
