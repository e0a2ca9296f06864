// Fuzzes the tool router with arbitrary tool inputs (the JSON a model sends): every call is a
// result (maybe an is_error one), never a crash, and nothing is written outside the sandbox.
// run_command is left out: it would run arbitrary shell.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include <loopr/core/config.hpp>
#include <loopr/tools/tool_router.hpp>

namespace {

struct World {
  std::filesystem::path root;
  std::filesystem::path outside;
  loopr::ConcurrencyConfig concurrency;
  std::unique_ptr<loopr::tools::RunnerSlots> slots;
  World() {
    char tmpl[] = "/tmp/loopr-tool-fuzz-XXXXXX";
    std::filesystem::path base = mkdtemp(tmpl);
    root = base / "wt";
    outside = base / "outside";
    std::filesystem::create_directories(root / "src");
    std::filesystem::create_directories(outside);
    std::filesystem::create_symlink(outside, root / "escape");
    FILE* f = std::fopen((root / "src/a.txt").c_str(), "w");
    std::fputs("alpha\nbeta\n", f);
    std::fclose(f);
    slots = std::make_unique<loopr::tools::RunnerSlots>(concurrency);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static World world;
  if (size == 0) return 0;
  static const char* kTools[] = {"read_file", "write_file", "edit_file", "list_dir", "search", "no_such_tool"};
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  loopr::tools::ToolCall call;
  call.name = kTools[data[0] % 6];
  call.input = nlohmann::json::parse(text, nullptr, false);
  if (call.input.is_discarded()) call.input = nlohmann::json(std::string(text));
  static loopr::SandboxConfig unconfined = [] {
    loopr::SandboxConfig c;
    c.mode = "none";  // the file tools are what is fuzzed; no command runs
    return c;
  }();
  static auto executor = loopr::exec::make_executor(unconfined, {loopr::RepoPaths(world.root)});
  loopr::tools::ToolRouter router(loopr::tools::Sandbox(world.root), *world.slots, *executor,
                                  loopr::tools::policy_for(loopr::LoopType::code, loopr::Config{}, ""));
  auto result = router.call(call, nullptr);
  (void)result;
  if (!std::filesystem::is_empty(world.outside)) __builtin_trap();  // escaped the sandbox
  return 0;
}
