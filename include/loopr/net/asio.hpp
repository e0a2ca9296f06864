// The one way loopr includes Boost.Asio: `<utility>` first (Boost 1.74's awaitable.hpp forgets
// it and g++ 12 fails with "'exchange' is not a member of 'std'"), then the coroutine pieces.
// Include Beast only in the few network translation units, never from this header.
#pragma once

#include <utility>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace loopr {
namespace net = boost::asio;

template <typename T>
using awaitable = boost::asio::awaitable<T>;

/// Runs blocking `fn` (libgit2, RocksDB, waiting on a child) on `pool` and resumes the caller
/// on its own executor with the result; exceptions from `fn` are rethrown in the caller.
template <typename Fn>
auto run_blocking(net::thread_pool& pool, Fn fn) -> awaitable<decltype(fn())> {
  using R = decltype(fn());
  co_return co_await net::co_spawn(
      pool.get_executor(), [fn = std::move(fn)]() mutable -> awaitable<R> { co_return fn(); },
      net::use_awaitable);
}

}  // namespace loopr
