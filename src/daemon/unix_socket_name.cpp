#include "daemon/unix_socket_name.hpp"

#include <fcntl.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace loopr::daemon {

Result<UnixSocketName> UnixSocketName::make(const std::filesystem::path& socket) {
  constexpr std::size_t kMax = sizeof(sockaddr_un::sun_path);  // includes the terminating NUL
  const std::string& full = socket.native();
  if (full.size() < kMax) return UnixSocketName(full, -1);

  std::filesystem::path dir = socket.parent_path();
  if (dir.empty()) dir = ".";
  std::string file = socket.filename().native();
  int fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    auto code = (e == ENOENT || e == ENOTDIR) ? ErrorCode::not_found : ErrorCode::io;
    return make_error(code,
                      "cannot open the folder of the socket " + full + ": " + std::strerror(e));
  }
  std::string name = "/proc/self/fd/" + std::to_string(fd) + "/" + file;
  if (name.size() >= kMax) {
    ::close(fd);
    return make_error(ErrorCode::invalid_argument,
                      "the socket file name " + file + " is too long for a Unix socket");
  }
  return UnixSocketName(std::move(name), fd);
}

UnixSocketName::UnixSocketName(UnixSocketName&& other) noexcept
    : name_(std::move(other.name_)), dir_fd_(std::exchange(other.dir_fd_, -1)) {}

UnixSocketName& UnixSocketName::operator=(UnixSocketName&& other) noexcept {
  if (this != &other) {
    if (dir_fd_ >= 0) ::close(dir_fd_);
    name_ = std::move(other.name_);
    dir_fd_ = std::exchange(other.dir_fd_, -1);
  }
  return *this;
}

UnixSocketName::~UnixSocketName() {
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

}  // namespace loopr::daemon
