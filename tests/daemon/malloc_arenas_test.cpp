// The daemon's malloc arenas are bounded (loopr/daemon/daemon.hpp: bound_malloc_arenas): what
// glibc does with 8 threads alive at once, with the bound and without it. Each case runs in a
// forked copy of this process, since the setting is process-wide and cannot be undone.
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <loopr/daemon/daemon.hpp>

namespace {

// The arenas glibc's malloc_info reports (one `<heap nr=…>` each).
int count_arenas() {
  char* text = nullptr;
  std::size_t size = 0;
  FILE* out = open_memstream(&text, &size);
  if (!out) return -1;
  malloc_info(0, out);
  std::fclose(out);
  std::string info(text, size);
  std::free(text);
  int n = 0;
  for (std::size_t at = info.find("<heap nr="); at != std::string::npos;
       at = info.find("<heap nr=", at + 1))
    ++n;
  return n;
}

// In a forked child: (the bound,) `threads` threads that each allocate while all are alive,
// then the number of arenas as the exit status (-1 when the count failed).
int arenas_with_threads(bool bounded, int threads) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (bounded) loopr::daemon::bound_malloc_arenas();
    std::barrier all_allocated(threads);
    std::vector<std::thread> running;
    for (int i = 0; i < threads; ++i)
      running.emplace_back([&all_allocated] {
        void* p = std::malloc(4096);
        std::memset(p, 1, 4096);
        // The compiler may drop a malloc whose memory is only freed again: this one is used.
        asm volatile("" : : "r"(p) : "memory");
        all_allocated.arrive_and_wait();
        std::free(p);
      });
    for (auto& t : running) t.join();
    ::_exit(count_arenas() & 0xff);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// The arenas this process has already (the tests before this one ran threads), which a forked
// child inherits: those that threads left are reused before any is made.
struct Arenas {
  int before = count_arenas();
  int threads = before + 8;  // 8 more than could reuse one
};

TEST(MallocArenasTest, TheDaemonsThreadsShareAtMostTwoArenas) {
  if (std::getenv("MALLOC_ARENA_MAX") || std::getenv("GLIBC_TUNABLES"))
    GTEST_SKIP() << "the environment sets glibc's arenas itself";
  Arenas a;
  ASSERT_GE(a.before, 1);
  const int unbounded = arenas_with_threads(false, a.threads);
  const int bounded = arenas_with_threads(true, a.threads);
  // Without the bound glibc makes an arena for each thread that finds none free (up to 8 per
  // core); with it, none once there are two.
  EXPECT_GT(unbounded, std::max(a.before, loopr::daemon::kMallocArenas));
  EXPECT_GE(bounded, 1);
  EXPECT_LE(bounded, std::max(a.before, loopr::daemon::kMallocArenas));
}

TEST(MallocArenasTest, ThePersonsOwnSettingIsLeftToGlibc) {
  if (std::getenv("MALLOC_ARENA_MAX") || std::getenv("GLIBC_TUNABLES"))
    GTEST_SKIP() << "the environment sets glibc's arenas itself";
  // glibc read the environment at this process's start, so setting it now changes nothing in
  // glibc; it only tells bound_malloc_arenas to stay out of the way.
  Arenas a;
  ::setenv("MALLOC_ARENA_MAX", "8", 1);
  const int arenas = arenas_with_threads(true, a.threads);
  ::unsetenv("MALLOC_ARENA_MAX");
  EXPECT_GT(arenas, std::max(a.before, loopr::daemon::kMallocArenas));
}

}  // namespace
