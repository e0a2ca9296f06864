// docs/security.md and the escape suite agree (issue 40 item 1): every numbered claim of the
// threat model names the tests that prove it, every test it names exists, and every test that
// says `// proves S<b>.<n>` points at a claim the page makes. A claim nobody tests, or a test
// proving a claim that was dropped, fails here, so the page a reviewer reads stays the suite.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Claim {
  std::string id;
  int line = 0;
  std::vector<std::string> tests;  ///< `Suite.Name` as the tests column names them
};

// The table rows `| S1.2 | claim | `Suite.Name`, … |` of the page.
std::vector<Claim> claims_of(const std::string& page) {
  static const std::regex row(R"(^\|\s*(S\d+\.\d+)\s*\|.*\|([^|]*)\|\s*$)");
  static const std::regex test_name(R"(([A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_/]*))");
  std::vector<Claim> out;
  std::istringstream in(page);
  std::string text;
  for (int n = 1; std::getline(in, text); ++n) {
    std::smatch m;
    if (!std::regex_match(text, m, row)) continue;
    Claim c{m[1], n, {}};
    std::string cell = m[2];
    for (std::sregex_iterator it(cell.begin(), cell.end(), test_name), end; it != end; ++it)
      c.tests.push_back((*it)[1]);
    out.push_back(std::move(c));
  }
  return out;
}

struct Suite {
  std::set<std::string> tests;                          ///< every `Suite.Name` defined
  std::map<std::string, std::vector<std::string>> proofs;  ///< claim id → `file:line`s
};

Suite scan_tests(const fs::path& root) {
  static const std::regex def(
      R"(\bTEST(?:_F|_P)?\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\))");
  static const std::regex proves(R"(//\s*proves\s+((?:S\d+\.\d+[\s,]*)+))");
  static const std::regex id(R"(S\d+\.\d+)");
  Suite s;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file() || e.path().extension() != ".cpp") continue;
    if (e.path().string().find("node_modules") != std::string::npos) continue;
    std::istringstream in(read_all(e.path()));
    std::string text;
    for (int n = 1; std::getline(in, text); ++n) {
      std::smatch m;
      if (std::regex_search(text, m, def)) s.tests.insert(m[1].str() + "." + m[2].str());
      if (std::regex_search(text, m, proves)) {
        std::string ids = m[1];
        for (std::sregex_iterator it(ids.begin(), ids.end(), id), end; it != end; ++it)
          s.proofs[it->str()].push_back(
              fs::relative(e.path(), root).string() + ":" + std::to_string(n));
      }
    }
  }
  return s;
}

const fs::path kSource = LOOPR_SOURCE_DIR;

}  // namespace

TEST(SecurityDocumentTest, EveryClaimNamesTestsThatExistAndSayTheyProveIt) {
  std::string page = read_all(kSource / "docs/security.md");
  ASSERT_FALSE(page.empty()) << "docs/security.md is missing";
  std::vector<Claim> claims = claims_of(page);
  ASSERT_FALSE(claims.empty()) << "no `| S<b>.<n> | … |` rows in docs/security.md";
  Suite suite = scan_tests(kSource / "tests");
  std::set<std::string> ids;
  for (const Claim& c : claims) {
    EXPECT_TRUE(ids.insert(c.id).second) << c.id << " is on the page twice (line " << c.line << ")";
    EXPECT_FALSE(c.tests.empty()) << c.id << " (docs/security.md:" << c.line
                                  << ") names no test that proves it";
    for (const std::string& t : c.tests)
      EXPECT_TRUE(suite.tests.count(t)) << c.id << " names " << t << ", which is no test";
    EXPECT_TRUE(suite.proofs.count(c.id))
        << c.id << " (docs/security.md:" << c.line << "): no test says `// proves " << c.id << "`";
  }
  for (const auto& [id, where] : suite.proofs)
    EXPECT_TRUE(ids.count(id)) << where.front() << " proves " << id
                               << ", which docs/security.md does not claim";
}

TEST(SecurityDocumentTest, TheReadmePointsToTheThreatModel) {
  std::string readme = read_all(kSource / "README.md");
  EXPECT_NE(readme.find("docs/security.md"), std::string::npos)
      << "README.md's security section should point to docs/security.md";
}
