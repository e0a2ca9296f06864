// The secret locations of a home are never shown in the sandbox, however they are written
// (issue 41): refused by the config with the key named.
#include <gtest/gtest.h>

#include <loopr/core/config.hpp>
#include <loopr/core/secret_paths.hpp>

using namespace loopr;

namespace {

struct Row {
  const char* written;
  bool refused;
};

TEST(SecretPaths, KnownLocationsHomesAndWhatContainsThemAreRefused) {
  const std::filesystem::path home = "/home/u";
  const Row rows[] = {
      {"~/.ssh", true},           {"~/.ssh/id_ed25519", true},     {"/home/u/.aws", true},
      {"/home/other/.aws/credentials", true}, {"~/.config/gh", true}, {"~/.config", true},
      {"~/.netrc", true},         {"~/.npmrc", true},              {"~/.docker", true},
      {"~/.git-credentials", true}, {"~/.gnupg/private-keys-v1.d", true},
      {"~/.local/share/keyrings", true}, {"~/.local/share", true}, {"~/Library/Keychains", true},
      {"~", true},                {"/home/u", true},               {"/home", true},
      {"/root", true},            {"/", true},                     {"/home/u/../u", true},
      {"~/.cargo/credentials.toml", true},
      {"~/.pyenv/versions/3.11.7", false}, {"~/.virtualenvs/proj", false}, {"~/.cargo", false},
      {"~/.rustup", false},       {"/opt/sdk", false},             {"~/.local/bin", false},
      {"~/.nvm/versions/node/v20.11.0", false}, {"~/go/pkg/mod", false},
  };
  for (const auto& r : rows)
    EXPECT_EQ(!secret_path_problem(r.written, home).empty(), r.refused)
        << r.written << ": " << secret_path_problem(r.written, home);
}

TEST(SecretPaths, TheConfigRefusesThemNamingTheKey) {
  for (const char* entry : {"~/.ssh", "~/.aws/credentials", "~/.config/gh", "~", "/home"}) {
    auto c = parse_config(std::string("sandbox:\n  read_only: [\"") + entry + "\"]\n", "c.yml");
    ASSERT_FALSE(c) << entry;
    EXPECT_NE(c.error().message.find("sandbox.read_only"), std::string::npos)
        << c.error().message;
    EXPECT_NE(c.error().message.find(entry), std::string::npos) << c.error().message;
  }
  auto fine = parse_config("sandbox:\n  read_only: [~/.pyenv/versions/3.11.7, /opt/sdk]\n", "c");
  EXPECT_TRUE(fine) << fine.error().message;
}

}  // namespace
