#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <sstream>

#include "tools/file_io.hpp"

namespace loopr::tools {
namespace fs = std::filesystem;

Result<std::string> read_text_file(const fs::path& path, std::size_t max_bytes) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return make_error(ErrorCode::not_found, path.filename().string() + " does not exist");
  auto size = fs::file_size(path, ec);
  if (ec) return make_error(ErrorCode::io, "cannot read " + path.filename().string() + ": " + ec.message());
  if (size > max_bytes)
    return make_error(ErrorCode::invalid_argument, path.filename().string() + " is " + std::to_string(size) +
                                                       " bytes, over the " + std::to_string(max_bytes) + "-byte limit");
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::io, "cannot open " + path.filename().string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool looks_binary(const std::string& text) {
  return text.find('\0', 0) < std::min<std::size_t>(text.size(), 8192);
}

Result<void> write_file_atomically(const fs::path& path, const std::string& content) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return make_error(ErrorCode::io, "cannot create the folder " + path.parent_path().filename().string() + ": " + ec.message());
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  fs::path tmp = path.parent_path() / ("." + path.filename().string() + ".loopr-tmp-" + std::to_string(rng() % 1000000));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return make_error(ErrorCode::io, "cannot write " + path.filename().string());
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      return make_error(ErrorCode::io, "cannot write " + path.filename().string() + " (disk full?)");
    }
  }
  auto perms = fs::status(path, ec).permissions();
  if (!ec) fs::permissions(tmp, perms, ec);
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return make_error(ErrorCode::io, "cannot replace " + path.filename().string() + ": " + ec.message());
  }
  return ok();
}

}  // namespace loopr::tools
