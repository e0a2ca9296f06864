// A hand-written classic BPF program (no libseccomp needed). Its shape, per architecture:
//   load arch; not ours → next architecture (or allow)
//   load nr (x32's bit cleared: x32 calls use the x86-64 numbers with bit 30 set)
//   for each guarded call: nr differs → skip its block; the block ends in a return
//   allow
#include "exec/seccomp_filter.hpp"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>
#include <vector>

namespace loopr::exec {
namespace {

using Program = std::vector<sock_filter>;

constexpr std::uint32_t kSuidBits = S_ISUID | S_ISGID;
#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif
constexpr std::uint32_t kCreates = O_CREAT | __O_TMPFILE;
constexpr std::uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr std::uint32_t kDeny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
constexpr std::uint32_t kNoSys = SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA);

// The low 32 bits of argument `i` (little-endian: the first word).
constexpr std::uint32_t arg_low(int i) {
  return static_cast<std::uint32_t>(offsetof(seccomp_data, args) + 8 * i);
}

sock_filter stmt(std::uint16_t code, std::uint32_t k) { return BPF_STMT(code, k); }
sock_filter jump(std::uint16_t code, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
  return BPF_JUMP(code, k, jt, jf);
}

// One guarded call: which argument holds the mode, and (for the open family) which holds the
// flags; `mode < 0`: the call is refused outright with ENOSYS.
struct Guard {
  int nr;
  int mode;
  int flags = -1;
};

// `nr` differs → skip the block; else the block decides.
void add_guard(Program& p, const Guard& g) {
  Program block;
  if (g.mode < 0) {
    block.push_back(stmt(BPF_RET | BPF_K, kNoSys));
  } else {
    if (g.flags >= 0) {
      // Not creating a file: nothing to check (skip to the final allow).
      block.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, arg_low(g.flags)));
      block.push_back(jump(BPF_JMP | BPF_JSET | BPF_K, kCreates, 0, 3));
    }
    block.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, arg_low(g.mode)));
    block.push_back(jump(BPF_JMP | BPF_JSET | BPF_K, kSuidBits, 0, 1));
    block.push_back(stmt(BPF_RET | BPF_K, kDeny));
    block.push_back(stmt(BPF_RET | BPF_K, kAllow));
  }
  p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(g.nr), 0,
                   static_cast<std::uint8_t>(block.size())));
  p.insert(p.end(), block.begin(), block.end());
}

// The section for one architecture: its guards, then allow.
Program arch_section(const std::vector<Guard>& guards, bool clear_x32_bit) {
  Program p;
  p.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
  if (clear_x32_bit) p.push_back(stmt(BPF_ALU | BPF_AND | BPF_K, ~0x40000000U));
  for (const Guard& g : guards) add_guard(p, g);
  p.push_back(stmt(BPF_RET | BPF_K, kAllow));
  return p;
}

// `arch` → `section`, else go on after it.
void add_arch(Program& p, std::uint32_t arch, const Program& section) {
  p.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, arch, 0, static_cast<std::uint8_t>(section.size())));
  p.insert(p.end(), section.begin(), section.end());
}

Program build() {
  Program p;
#if defined(__x86_64__)
  const std::vector<Guard> native = {
      {SYS_chmod, 1}, {SYS_fchmod, 1},  {SYS_fchmodat, 2},  {452 /* fchmodat2 */, 2},
      {SYS_mkdir, 1}, {SYS_mkdirat, 2}, {SYS_mknod, 1},     {SYS_mknodat, 2},
      {SYS_creat, 1}, {SYS_open, 2, 1}, {SYS_openat, 3, 2}, {437 /* openat2 */, -1},
      // Refused outright (docs/security.md lists Docker's refusals and what loopr allows).
      {SYS_keyctl, -1}, {SYS_add_key, -1}, {SYS_request_key, -1}, {SYS_userfaultfd, -1},
      {SYS_perf_event_open, -1}, {SYS_bpf, -1}, {425 /* io_uring_setup */, -1},
      {426 /* io_uring_enter */, -1}, {427 /* io_uring_register */, -1}, {SYS_uselib, -1},
      {SYS_ustat, -1}, {SYS_sysfs, -1}, {SYS__sysctl, -1}, {SYS_lookup_dcookie, -1},
  };
  // The same calls of 32-bit programs (i386 numbers).
  const std::vector<Guard> i386 = {
      {15, 1}, {94, 1},  {306, 2}, {452, 2},  {39, 1},     {296, 2},
      {14, 1}, {297, 2}, {8, 1},   {5, 2, 1}, {295, 3, 2}, {437, -1},
      // keyctl, add_key, request_key, userfaultfd, perf_event_open, bpf, io_uring_*, uselib,
      // ustat, sysfs, _sysctl, lookup_dcookie
      {288, -1}, {286, -1}, {287, -1}, {374, -1}, {336, -1}, {357, -1}, {425, -1}, {426, -1},
      {427, -1}, {86, -1}, {62, -1}, {135, -1}, {149, -1}, {253, -1},
  };
  add_arch(p, AUDIT_ARCH_X86_64, arch_section(native, true));
  add_arch(p, AUDIT_ARCH_I386, arch_section(i386, false));
  p.push_back(stmt(BPF_RET | BPF_K, kAllow));
#elif defined(__aarch64__)
  const std::vector<Guard> native = {
      {SYS_fchmod, 1},  {SYS_fchmodat, 2},  {452 /* fchmodat2 */, 2}, {SYS_mkdirat, 2},
      {SYS_mknodat, 2}, {SYS_openat, 3, 2}, {437 /* openat2 */, -1},
      {SYS_keyctl, -1}, {SYS_add_key, -1}, {SYS_request_key, -1}, {SYS_userfaultfd, -1},
      {SYS_perf_event_open, -1}, {SYS_bpf, -1}, {425, -1}, {426, -1}, {427, -1},
      {SYS_lookup_dcookie, -1},
  };
  add_arch(p, AUDIT_ARCH_AARCH64, arch_section(native, false));
  p.push_back(stmt(BPF_RET | BPF_K, kAllow));
#endif
  return p;
}

}  // namespace

const std::string& suid_filter_program() {
  static const std::string bytes = [] {
    Program p = build();
    return std::string(reinterpret_cast<const char*>(p.data()), p.size() * sizeof(sock_filter));
  }();
  return bytes;
}

}  // namespace loopr::exec
