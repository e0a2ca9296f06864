// A Unix socket address is limited to sizeof(sockaddr_un::sun_path) (108 bytes), and a socket in
// a deep repository (`<repo>/.loopr/run/loopr.sock`) can be longer. A longer path is reached as
// `/proc/self/fd/<N>/<file>` through an open handle on its folder, for bind and connect alike.
#pragma once

#include <filesystem>
#include <string>

#include <loopr/core/result.hpp>

namespace loopr::daemon {

class UnixSocketName {
 public:
  /// A name for `socket` that fits a sockaddr_un. The folder of a long path must exist
  /// (ErrorCode::not_found otherwise); a file name too long on its own is invalid_argument.
  static Result<UnixSocketName> make(const std::filesystem::path& socket);

  UnixSocketName(UnixSocketName&& other) noexcept;
  UnixSocketName& operator=(UnixSocketName&& other) noexcept;
  UnixSocketName(const UnixSocketName&) = delete;
  UnixSocketName& operator=(const UnixSocketName&) = delete;
  ~UnixSocketName();

  /// What to put in sun_path (valid while this object lives).
  const std::string& name() const { return name_; }

 private:
  UnixSocketName(std::string name, int dir_fd) : name_(std::move(name)), dir_fd_(dir_fd) {}
  std::string name_;
  int dir_fd_ = -1;  ///< the folder's O_PATH handle when `name_` goes through /proc/self/fd
};

}  // namespace loopr::daemon
