// Which tests failed, read from a test command's output: each runner's own way of naming a
// failing test, one pattern per line shape. Read from the normalized output (test_output.cpp),
// so a name that holds a temporary path or a duration compares equal between runs.
#include <re2/re2.h>

#include <memory>
#include <set>

#include <loopr/engine/test_output.hpp>

namespace loopr::engine {
namespace {

// One line shape; `name` is its first capture group, `suffix` its second (unittest's class).
struct Shape {
  std::unique_ptr<re2::RE2> re;
  bool class_suffix = false;
};

const std::vector<Shape>& shapes() {
  static const std::vector<Shape> all = [] {
    std::vector<Shape> s;
    auto add = [&s](const char* pattern, bool class_suffix = false) {
      s.push_back({std::make_unique<re2::RE2>(pattern), class_suffix});
    };
    add(R"(^(?:FAILED|ERROR) (\S+::\S+|\S+\.py)(?: .*)?$)");              // pytest's summary
    add(R"(^(?:FAIL|ERROR): (\w+) \(([\w.]+)\)\s*$)", true);              // unittest
    add(R"(^\s*--- FAIL: (\S+))");                                        // go test
    add(R"(^test (\S+) \.\.\. FAILED\s*$)");                              // cargo test
    add(R"(^\s*\d+ - (.+?) \((?:Failed|Timeout|SEGFAULT|Subprocess aborted|Exception|)"
        R"(Not Run|OTHER_FAULT|ILLEGAL|BAD_COMMAND)\)\s*$)");          // ctest's summary
    add(R"(^\s*● ((?:[^›]+ › )*[^›]+?)\s*$)");                            // jest
    add(R"(^(\S+ > .+) FAILED\s*$)");                                     // gradle
    add(R"(^not ok \d+(?: -)? (.+?)(?: # .*)?\s*$)");                     // TAP (node --test, bats)
    add(R"(^rspec (\./\S+:\d+))");                                        // rspec
    add(R"(^\[ERROR\]\s+([A-Za-z_$][\w$]*(?:\.[\w$]+)+(?:\[\d+\])?):\d+)");  // maven surefire
    return s;
  }();
  return all;
}

// jest prints `● Test suite failed to run` and `● Console` headings the same way.
bool is_heading(const std::string& name) {
  return name == "Test suite failed to run" || name.rfind("Console", 0) == 0;
}

}  // namespace

std::vector<std::string> failing_tests(std::string_view output, std::size_t limit) {
  const std::string text = normalize_test_output(output);
  std::set<std::string> names;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const re2::StringPiece line(text.data() + start, end - start);
    start = end + 1;
    for (const Shape& shape : shapes()) {
      std::string name, cls;
      const bool hit = shape.class_suffix ? re2::RE2::PartialMatch(line, *shape.re, &name, &cls)
                                          : re2::RE2::PartialMatch(line, *shape.re, &name);
      if (!hit || name.empty() || is_heading(name)) continue;
      if (shape.class_suffix) name = cls + "." + name;
      if (name.size() > 200) name.resize(200);
      names.insert(std::move(name));
      break;
    }
  }
  std::vector<std::string> out(names.begin(), names.end());
  if (out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace loopr::engine
