// The demo of `.loopr-example` in an EngineKit: its project (the files outside git's ignore
// list, the project's own tests really run), its scripted model, its config and the shipped
// prompt templates. For the manager's tests that run a whole tree in-process.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include <loopr/core/config.hpp>
#include <loopr/engine/repo_prompts.hpp>

#include "support/fakes/engine_kit.hpp"
#include "support/temp_dir.hpp"

namespace loopr::testing {

inline const std::filesystem::path kDemoExample =
    source_tree() / ".loopr-example";

/// The demo project's files, with the `.gitignore` loopr's own folders need.
inline std::map<std::string, std::string> demo_project() {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(kDemoExample / "project"))
    if (e.is_regular_file())
      files[fs::relative(e.path(), kDemoExample / "project").string()] = read_file(e.path());
  files[".gitignore"] =
      ".loopr/state/\n.loopr/run/\n.loopr/worktrees/\n.loopr/archive/\n.loopr/logs/\n";
  return files;
}

/// The kit with the demo's model, config and prompts.
struct DemoTree {
  // Before the kit: runs a failed assertion leaves going render prompts until the kit's
  // destructor has shut the manager down.
  std::unique_ptr<engine::RepoPrompts> prompts;
  EngineKit kit{read_file(kDemoExample / "mock-model.yml"), demo_project()};

  explicit DemoTree(MergeMode merge = MergeMode::automatic) {
    auto config = parse_config(read_file(kDemoExample / "config.yml"), "config.yml");
    if (!config) throw std::runtime_error(config.error().message);
    *kit.config = *config;
    kit.config->merge = merge;
    kit.config->llm.stream = false;
    kit.config->llm.base_url.clear();
    kit.executor.run_for_real("tests/run.sh");
    // The shipped templates (the scripted model finds the artifact paths in them).
    prompts = std::make_unique<engine::RepoPrompts>(kit.dir.path());
    kit.prompt_source = prompts.get();
  }

  manager::LoopManager& manager() { return kit.manager(); }

  Loop loop(const std::string& id) { return kit.loop(id); }
  int published(const std::string& type) const {
    int n = 0;
    for (const Event& e : kit.published) n += e.type == type;
    return n;
  }
  bool reach(const std::string& id, LoopStatus status) {
    return kit.drive_while_not([&] {
      auto l = kit.store->get_loop(id);
      return l && l->status == status;
    });
  }

  /// Submits the demo's request and drives until plan 001 waits at its gate. Call it inside
  /// ASSERT_NO_FATAL_FAILURE: a failed step ends the test.
  void submit_to_the_gate() {
    ASSERT_TRUE(kit.wait(manager().submit("Add a --shout flag to greet")).ok());
    ASSERT_TRUE(reach("001", LoopStatus::awaiting_approval));
  }

  /// The same, then approves the plan and drives until loop `id` of its tree is stored.
  void approve_until_stored(const std::string& id) {
    ASSERT_NO_FATAL_FAILURE(submit_to_the_gate());
    ASSERT_TRUE(kit.wait(manager().approve("001")).ok());
    ASSERT_TRUE(kit.drive_while_not([&] { return kit.store->get_loop(id).ok(); }));
  }
};

}  // namespace loopr::testing
