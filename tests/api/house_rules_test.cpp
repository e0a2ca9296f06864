// The house's rules (issue 44; shared/reviews/architecture-3.md), read from the source on every
// test run so that they keep holding after the round that made them true: no file over 600 lines
// and no function over 80 (60 in the front doors, src/cli and src/web); loopr's event types and
// loop statuses compared as strings only in src/api; no daemon answer read by name in the CLI or
// the web module; one place writing `loopr(` and one naming the iteration files; a README a
// newcomer finishes. A failure names the file and line and says what the rule is for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <loopr/api/events.hpp>
#include <loopr/core/iteration_files.hpp>
#include <loopr/core/loop.hpp>

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = LOOPR_SOURCE_DIR;

std::string blank(const std::string& src, bool literals);

struct SourceFile {
  std::string path;  ///< relative to the source root: `src/cli/app.cpp`
  std::string text;
  std::string code;  ///< the text with its comments blanked
  std::string bare;  ///< and the literals' contents and the preprocessor's lines too
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Every C++ file of the product (src/ and include/), in a stable order.
const std::vector<SourceFile>& product_sources() {
  static const std::vector<SourceFile> files = [] {
    std::vector<SourceFile> out;
    for (const char* dir : {"src", "include"})
      for (const auto& e : fs::recursive_directory_iterator(kRoot / dir)) {
        const auto ext = e.path().extension();
        if (!e.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
        std::string text = read_text(e.path());
        std::string code = blank(text, false), bare = blank(text, true);
        out.push_back({fs::relative(e.path(), kRoot).generic_string(), std::move(text),
                       std::move(code), std::move(bare)});
      }
    std::sort(out.begin(), out.end(),
              [](const SourceFile& a, const SourceFile& b) { return a.path < b.path; });
    return out;
  }();
  return files;
}

bool starts_with_any(const std::string& path, std::initializer_list<std::string_view> dirs) {
  return std::any_of(dirs.begin(), dirs.end(),
                     [&](std::string_view d) { return path.starts_with(d); });
}

int line_of(const std::string& text, std::size_t pos) {
  return 1 +
         static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n'));
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// The text with comments blanked (newlines kept, so lines still count); with `literals`, also
/// the contents of string and character literals and the preprocessor's lines.
std::string blank(const std::string& src, bool literals) {
  std::string out = src;
  auto wipe = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < out.size(); ++k)
      if (out[k] != '\n') out[k] = ' ';
  };
  std::size_t i = 0;
  const std::size_t n = src.size();
  while (i < n) {
    if (src.compare(i, 2, "//") == 0) {
      std::size_t j = src.find('\n', i);
      j = j == std::string::npos ? n : j;
      wipe(i, j);
      i = j;
    } else if (src.compare(i, 2, "/*") == 0) {
      std::size_t j = src.find("*/", i + 2);
      j = j == std::string::npos ? n : j + 2;
      wipe(i, j);
      i = j;
    } else if (src.compare(i, 2, "R\"") == 0 && (i == 0 || !word_char(src[i - 1]))) {
      std::size_t open = src.find('(', i + 2);
      if (open == std::string::npos) break;
      const std::string close = ")" + src.substr(i + 2, open - i - 2) + "\"";
      std::size_t end = src.find(close, open);
      end = end == std::string::npos ? n : end + close.size();
      if (literals) wipe(i + 2, end - 1);
      i = end;
    } else if (src[i] == '"' ||
               (src[i] == '\'' &&
                (i == 0 || !std::isxdigit(static_cast<unsigned char>(src[i - 1]))))) {
      const char quote = src[i];
      std::size_t j = i + 1;
      while (j < n && src[j] != quote && src[j] != '\n') j += src[j] == '\\' ? 2 : 1;
      if (literals) wipe(i + 1, j);
      i = j + 1;
    } else {
      ++i;
    }
  }
  if (literals) {
    std::size_t line = 0;
    while (line < out.size()) {
      std::size_t end = out.find('\n', line);
      end = end == std::string::npos ? out.size() : end;
      std::size_t first = out.find_first_not_of(" \t", line);
      if (first < end && out[first] == '#') wipe(first, end);
      line = end + 1;
    }
  }
  return out;
}

struct FunctionSpan {
  int line = 0;   ///< where its body opens
  int lines = 0;  ///< from the opening brace's line to the closing one's
};

bool has_word(const std::string& text, std::string_view word) {
  for (std::size_t p = text.find(word); p != std::string::npos; p = text.find(word, p + 1)) {
    const std::size_t end = p + word.size();
    if ((p == 0 || !word_char(text[p - 1])) && (end >= text.size() || !word_char(text[end])))
      return true;
  }
  return false;
}

/// Whether the text before a `{` outside any function opens a function's body (or a lambda's at
/// namespace scope), rather than a namespace, a class or an initializer.
bool opens_function(std::string head) {
  if (has_word(head, "namespace") || has_word(head, "extern")) return false;
  if ((has_word(head, "class") || has_word(head, "struct") || has_word(head, "union") ||
       has_word(head, "enum")) &&
      head.find(')') == std::string::npos)
    return false;
  if (head.find(')') == std::string::npos) return false;
  for (std::size_t p = head.find("operator"); p != std::string::npos; p = head.find("operator"))
    head.replace(p, 8, "op");
  if (head.find('=') == std::string::npos) return true;
  if (head.size() > 300) head = head.substr(head.size() - 300);
  static const std::regex tail(R"(\)\s*((const|noexcept|override|final|mutable)\s*)*(->[^{}]*)?$)");
  return std::regex_search(head, tail);
}

/// The bodies of the functions defined in a C++ file (members defined in a class included;
/// lambdas count toward the function they are in).
std::vector<FunctionSpan> function_spans(const std::string& s) {
  enum class Kind { scope, function, block };
  std::vector<std::pair<Kind, std::size_t>> open;
  std::vector<FunctionSpan> out;
  std::size_t head_start = 0;
  int in_function = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == ';' && in_function == 0) {
      head_start = i + 1;
    } else if (c == '{') {
      Kind kind = Kind::block;
      if (in_function == 0)
        kind = opens_function(s.substr(head_start, i - head_start)) ? Kind::function : Kind::scope;
      if (kind == Kind::function) ++in_function;
      open.emplace_back(kind, i);
      if (in_function == 0) head_start = i + 1;
    } else if (c == '}' && !open.empty()) {
      auto [kind, at] = open.back();
      open.pop_back();
      if (kind == Kind::function) {
        --in_function;
        const int first = line_of(s, at);
        out.push_back({first, line_of(s, i) - first + 1});
      }
      if (in_function == 0) head_start = i + 1;
    }
  }
  return out;
}

std::vector<FunctionSpan> functions(const std::string& source) {
  return function_spans(blank(source, true));
}

// The scanner itself, on a sample with what trips naive ones: braces in comments, strings, raw
// strings and the preprocessor, a namespace-scope table, a class with a member defined inside,
// a lambda in a function, a constructor's initializer list.
TEST(HouseRulesTest, ScannerFindsEachFunctionBodyAndItsLines) {
  const std::string sample =
      "#if __has_include(\"x.hpp\") // {\n"     // 1
      "#endif\n"                                // 2
      "namespace a::b {\n"                      // 3
      "const int kTable[] = {1, 2, 3};\n"       // 4
      "struct S {\n"                            // 5
      "  int x{0};\n"                           // 6
      "  int f() const {\n"                     // 7  f: 7..9
      "    return x + 1;\n"                     // 8
      "  }\n"                                   // 9
      "};\n"                                    // 10
      "S::S(int v) : x(v) {\n"                  // 11 S::S: 11..14
      "  auto l = [&](int k) { return k; };\n"  // 12
      "  const char* t = \"} {\"; /* } */\n"    // 13
      "}\n"                                     // 14
      "std::string g() {\n"                     // 15 g: 15..19
      "  return R\"x(\n"                        // 16
      "}\n"                                     // 17
      ")x\";\n"                                 // 18
      "}\n"                                     // 19
      "}  // namespace a::b\n";                 // 20
  auto found = functions(sample);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].line, 7);
  EXPECT_EQ(found[0].lines, 3);
  EXPECT_EQ(found[1].line, 11);
  EXPECT_EQ(found[1].lines, 4);
  EXPECT_EQ(found[2].line, 15);
  EXPECT_EQ(found[2].lines, 5);
}

TEST(HouseRulesTest, NoFileOver600Lines) {
  std::size_t longest = 0;
  std::string longest_path;
  for (const auto& f : product_sources()) {
    const auto lines = static_cast<std::size_t>(std::count(f.text.begin(), f.text.end(), '\n'));
    if (lines > longest) longest = lines, longest_path = f.path;
    EXPECT_LE(lines, 600u) << f.path << " has " << lines
                           << " lines: split it by what its parts are about";
  }
  EXPECT_GT(longest, 100u) << "the scan found no real file: is LOOPR_SOURCE_DIR right?";
  std::printf("longest file: %s, %zu lines\n", longest_path.c_str(), longest);
}

TEST(HouseRulesTest, NoFunctionOver80LinesNorAFrontDoorOver60) {
  std::size_t counted = 0;
  std::pair<int, std::string> longest[2] = {{0, ""}, {0, ""}};  // anywhere, in a front door
  for (const auto& f : product_sources()) {
    const bool front_door = starts_with_any(f.path, {"src/cli/", "src/web/"});
    const int limit = front_door ? 60 : 80;
    for (const auto& fn : function_spans(f.bare)) {
      ++counted;
      for (int k = 0; k <= (front_door ? 1 : 0); ++k)
        if (fn.lines > longest[k].first)
          longest[k] = {fn.lines, f.path + ":" + std::to_string(fn.line)};
      EXPECT_LE(fn.lines, limit) << f.path << ":" << fn.line << ": a function of " << fn.lines
                                 << " lines (at most " << limit
                                 << (front_door ? " in the front doors" : "")
                                 << "): name its steps as functions of their own";
    }
  }
  EXPECT_GT(counted, 1000u) << "the scan found too few functions to be reading the product";
  std::printf("%zu functions; the longest %d lines (%s), in the front doors %d (%s)\n", counted,
              longest[0].first, longest[0].second.c_str(), longest[1].first,
              longest[1].second.c_str());
}

std::vector<std::string> event_type_names() {
  std::vector<std::string> out;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (out.push_back(loopr::api::type_name(loopr::api::EventBody{std::in_place_index<I>})), ...);
  }
  (std::make_index_sequence<std::variant_size_v<loopr::api::EventBody>>{});
  std::erase_if(out, [](const std::string& name) { return name.empty(); });  // OtherEvent
  return out;
}

// Events are typed where they are made (api::encode) and read through api::decode; statuses are
// LoopStatus. The providers' and forges' wires (src/llm, src/forge) compare their own words.
TEST(HouseRulesTest, EventTypesAndStatusesAreComparedAsStringsOnlyInTheApi) {
  std::set<std::string> names;
  for (const auto& n : event_type_names()) names.insert(n);
  ASSERT_GT(names.size(), 30u);
  ASSERT_TRUE(names.count("status_changed"));
  for (auto s : loopr::kAllLoopStatuses) names.insert(loopr::to_string(s));
  std::string alternatives;
  for (const auto& n : names) alternatives += (alternatives.empty() ? "" : "|") + n;
  const std::regex compare("(==|!=)\\s*\"(" + alternatives + ")\"|\"(" + alternatives +
                           ")\"\\s*(==|!=)|\\.type\\s*=\\s*\"(" + alternatives +
                           ")\"|make_event\\s*\\(");
  EXPECT_TRUE(std::regex_search("if (e.type == \"merged\")", compare));
  EXPECT_TRUE(std::regex_search("\"running\" != status", compare));
  EXPECT_FALSE(std::regex_search("kind == \"man\"", compare));
  for (const auto& f : product_sources()) {
    if (starts_with_any(f.path, {"src/api/", "include/loopr/api/", "src/llm/", "src/forge/"}))
      continue;
    for (std::sregex_iterator m(f.code.begin(), f.code.end(), compare), end; m != end; ++m)
      ADD_FAILURE() << f.path << ":" << line_of(f.code, static_cast<std::size_t>(m->position()))
                    << ": `" << m->str()
                    << "`: build the typed event (api::encode) or compare the decoded type or "
                       "the LoopStatus";
  }
}

// What the daemon answers is read through src/api's views (api::*_from_json), never by a
// field's name in the CLI or the web module; they only write JSON (`out["x"] = …`). A URL's
// query and a route's path parameters (`req.query["since"]`, `c.p.at("id")`,
// `params->at("id")`) are not answers.
TEST(HouseRulesTest, CliAndWebReadNoAnswerByName) {
  // On the text with the literals' contents blanked, so `"[" + s + "]"` is no subscript.
  const std::regex read(R"((\w*)(\["\s*"\](?!\s*=[^=])|(\.|->)(at|value|contains)\("))");
  // The URL's parts, by the names the web module gives them (ui.cpp): not answers.
  static const std::set<std::string> kNotAnswers = {"query", "p", "params"};
  auto reads_in = [&](const std::string& code) {
    std::vector<std::size_t> at;
    for (std::sregex_iterator m(code.begin(), code.end(), read), end; m != end; ++m)
      if (!kNotAnswers.count((*m)[1].str())) at.push_back(static_cast<std::size_t>(m->position()));
    return at;
  };
  auto reads = [&](const std::string& source) { return reads_in(blank(source, true)); };
  EXPECT_EQ(reads("auto d = answer[\"dir\"].get<std::string>();").size(), 1u);
  EXPECT_EQ(reads("if (answer.contains(\"pid\")) x = 1;").size(), 1u);
  EXPECT_EQ(reads("int n = answer.value(\"n\", 0);").size(), 1u);
  EXPECT_EQ(reads("return {h->value(\"pid\", 0L), false};").size(), 1u);
  EXPECT_EQ(reads("out[\"dir\"] = d; q = req.query[\"since\"]; i = c.p.at(\"id\");").size(), 0u);
  EXPECT_EQ(reads("return o ? s : \"[\" + s + \"]\";").size(), 0u);
  for (const auto& f : product_sources()) {
    if (!starts_with_any(f.path, {"src/cli/", "src/web/"})) continue;
    for (std::size_t at : reads_in(f.bare))
      ADD_FAILURE() << f.path << ":" << line_of(f.text, at)
                    << ": reads JSON by a field's name: read the answer through its api view";
  }
}

/// Where a string literal occurs in the product's code (comments do not count).
std::vector<std::string> files_with_literal(const std::string& literal) {
  std::vector<std::string> out;
  const std::string quoted = "\"" + literal + "\"";
  for (const auto& f : product_sources())
    if (f.code.find(quoted) != std::string::npos) out.push_back(f.path);
  return out;
}

TEST(HouseRulesTest, OnePlaceWritesTheCommitPrefixAndOneNamesTheIterationFiles) {
  EXPECT_EQ(files_with_literal("loopr("),
            std::vector<std::string>{"include/loopr/core/commit_message.hpp"})
      << "loopr's commit messages are built and read by loopr/core/commit_message.hpp only";
  for (const auto& spec : loopr::kIterationFiles)
    EXPECT_EQ(files_with_literal(spec.name),
              std::vector<std::string>{"include/loopr/core/iteration_files.hpp"})
        << spec.name << " is named in loopr/core/iteration_files.hpp only (file_name())";
}

// A newcomer finishes the README; what moved out is one link away and exists.
TEST(HouseRulesTest, TheReadmeIsShortAndEveryDocItLinksExists) {
  const std::string readme = read_text(kRoot / "README.md");
  EXPECT_LE(std::count(readme.begin(), readme.end(), '\n'), 350);
  std::set<std::string> linked;
  const std::regex link(R"(\]\((docs/[A-Za-z0-9_.-]+\.md))");
  for (std::sregex_iterator m(readme.begin(), readme.end(), link), end; m != end; ++m)
    linked.insert((*m)[1].str());
  for (const char* doc : {"docs/guide.md", "docs/configuration.md", "docs/security.md",
                          "docs/architecture.md", "docs/commands.md"})
    EXPECT_TRUE(linked.count(doc)) << "README.md does not link " << doc;
  for (const auto& doc : linked) EXPECT_TRUE(fs::is_regular_file(kRoot / doc)) << doc;
}

}  // namespace
