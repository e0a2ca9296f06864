#include <loopr/exec/build_caches.hpp>

#include <fstream>

namespace loopr::exec {
namespace fs = std::filesystem;

namespace {

struct CacheKind {
  const char* name;    ///< folder under .loopr/cache/
  const char* env;     ///< the tool's variable, set to where the sandbox shows it
};

// Each tool's own concurrency story (docs/guide.md "Warm caches"): Go's caches are safe for concurrent
// go commands (atomic renames, file locks for module downloads); cargo locks CARGO_HOME's package
// cache; npm's cacache and pip's and uv's caches are content-addressed with atomic writes (uv
// also locks); ccache locks its entries; Gradle locks its user home. No CARGO_TARGET_DIR: a
// shared target folder would serialise loops on its lock and mix their builds.
constexpr CacheKind kKinds[] = {
    {"go-build", "GOCACHE"}, {"go-mod", "GOMODCACHE"}, {"cargo", "CARGO_HOME"},
    {"npm", "npm_config_cache"}, {"pip", "PIP_CACHE_DIR"}, {"uv", "UV_CACHE_DIR"},
    {"ccache", "CCACHE_DIR"}, {"gradle", "GRADLE_USER_HOME"},
};

}  // namespace

fs::path caches_dir(const RepoPaths& paths) { return paths.dot_loopr() / "cache"; }

std::vector<CacheMount> cache_mounts(const RepoPaths& paths, const fs::path& home) {
  std::vector<CacheMount> out;
  fs::path dir = caches_dir(paths);
  // Under `.cache/loopr/` of the private home: never over a toolchain folder the person shows
  // read-only there (~/.cargo with its bin/).
  for (const auto& k : kKinds) out.push_back({k.env, dir / k.name, home / ".cache/loopr" / k.name});
  return out;
}

bool ensure_cache_dirs(const RepoPaths& paths, const std::vector<CacheMount>& mounts) {
  std::error_code ec;
  fs::path dir = caches_dir(paths);
  fs::path ignore = dir / ".gitignore";
  bool ok = true;
  if (!fs::exists(ignore, ec)) {
    fs::create_directories(dir, ec);
    std::ofstream(ignore) << "# loopr's build caches (loopr gc --caches clears them)\n*\n";
  }
  for (const auto& m : mounts) {
    if (fs::is_directory(m.host, ec)) continue;
    fs::create_directories(m.host, ec);
    if (ec) ok = false;
  }
  return ok;
}

}  // namespace loopr::exec
