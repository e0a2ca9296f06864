// `loopr daemon --foreground`: one process per repository. The pid file is flock()ed for the
// daemon's whole life, so a second daemon learns which pid serves, and a crashed one's stale pid
// file and socket are simply taken over (the kernel dropped its lock).
#include <loopr/daemon/daemon.hpp>

#include <cerrno>
#include <cstdlib>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <malloc.h>
#include <sys/file.h>
#include <unistd.h>

#include <boost/asio/signal_set.hpp>
#include <spdlog/spdlog.h>

#include <loopr/api/events.hpp>
#include <loopr/core/host_command.hpp>
#include <loopr/core/config.hpp>
#include <loopr/core/log.hpp>
#include <loopr/core/preflight.hpp>
#include <loopr/core/text.hpp>
#include <loopr/daemon/front_end.hpp>
#include <loopr/daemon/http.hpp>
#include <loopr/engine/loop_journal.hpp>
#include <loopr/engine/repo_prompts.hpp>
#include <loopr/engine/scheduler.hpp>
#include <loopr/exec/executor.hpp>
#include <loopr/exec/program_check.hpp>
#include <loopr/exec/secrets.hpp>
#include <loopr/manager/loop_manager.hpp>
#include <loopr/store/task_store.hpp>
#include <loopr/tools/runner_slots.hpp>

#include "daemon/api.hpp"
#include "daemon/loop_event_log.hpp"
#include "daemon/notify.hpp"
#include "daemon/peer_check.hpp"

namespace loopr::daemon {
namespace {

// Holds `.loopr/run/loopr.pid` locked; the lock is the "a daemon serves this repo" fact.
class PidLock {
 public:
  ~PidLock() {
    if (fd_ >= 0) {
      ::unlink(path_.c_str());
      ::close(fd_);
    }
  }

  Result<void> acquire(const std::filesystem::path& path) {
    path_ = path;
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) return make_error(ErrorCode::io, "cannot open " + path.string() + ": " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      std::string pid = read_pid();
      ::close(fd_);
      fd_ = -1;
      return make_error(ErrorCode::already_exists,
                        "the daemon already serves this repository (pid " + (pid.empty() ? "unknown" : pid) + ")");
    }
    std::string me = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size()))
      return make_error(ErrorCode::io, "cannot write " + path.string() + ": " + std::strerror(errno));
    return ok();
  }

 private:
  std::string read_pid() const {
    char buf[32] = {};
    ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
    std::string s(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }

  std::filesystem::path path_;
  int fd_ = -1;
};

struct Daemon {
  DaemonOptions options;
  RepoPaths paths;
  std::shared_ptr<Config> config;
  net::io_context io{1};
  net::thread_pool pool{4};
  net::thread_pool api_reads{2};  ///< the control API's store reads (ApiInfo::read_pool)
  std::unique_ptr<TaskStore> store;
  std::unique_ptr<engine::LoopJournal> journal;  ///< every store write, then its events
  engine::CostLedger costs;
  std::unique_ptr<llm::ReloadableClient> llm;
  std::unique_ptr<engine::Scheduler> scheduler;
  std::unique_ptr<tools::RunnerSlots> runners;
  std::unique_ptr<exec::Executor> executor;
  engine::EventBus bus;
  std::unique_ptr<engine::RepoPrompts> prompts;
  std::unique_ptr<engine::EngineContext> ctx;
  std::unique_ptr<manager::LoopManager> manager;
  std::unique_ptr<Notifier> notifier;  ///< the user's `notify` commands
  std::unique_ptr<Api> api;
  std::unique_ptr<HttpServer> server;
  std::unique_ptr<FrontEnd> web_ui;        ///< `loopr web` (options.web): off until asked
  std::unique_ptr<HttpServer> web_server;  ///< its loopback listener
  bool stopping = false;
  manager::DiskStatus disk;  ///< the last look (disk_watch)
  TimestampMs started_at = now_ms();

  Daemon(DaemonOptions o, exec::SecretEnv s) : options(std::move(o)), paths(options.repo), secrets(std::move(s)) {}

  exec::SecretEnv secrets;  ///< provider keys, taken out of the process environment at start

  EnvLookup env() const { return options.env ? EnvLookup(options.env) : secrets.lookup(); }

  // Every command of a loop goes through the executor; check at once that it works, and say
  // loudly when the config turned confinement off.
  Result<void> open_executor() {
    LOOPR_TRY(exec::place_worktrees(config->executor, paths));
    exec::ExecutorOptions eo{paths, env()};
    eo.executor = config->executor;
    executor = exec::make_executor(config->sandbox, eo);
    if (config->executor.kind == ExecutorKind::slurm) {
      // A cluster that cannot run the probe job (or whose nodes do not see the worktrees) is a
      // setup error: said at start, not discovered by the first loop.
      if (auto problem = executor->unavailable())
        return make_error(ErrorCode::unsupported, "executor: slurm: " + *problem);
      spdlog::info("executor: {}", executor->info().description);
      return ok();
    }
    if (!executor->info().confined) {
      spdlog::warn("SANDBOX OFF (sandbox: none in .loopr/config.yml): the model's commands, the validation and "
                   "stop scripts run UNCONFINED with this daemon's user, files, environment and network");
      return ok();
    }
    if (auto problem = executor->unavailable())
      spdlog::error("sandbox: commands cannot run, loops that need them will be blocked: {}", *problem);
    else
      spdlog::info("sandbox: {}", executor->info().description);
    return ok();
  }

  nlohmann::json sandbox_status() {
    const auto& i = executor->info();
    nlohmann::json j = {{"kind", i.kind}, {"confined", i.confined}, {"description", i.description}};
    auto problem = executor->unavailable();
    j["available"] = !problem.has_value();
    j["problem"] = problem ? nlohmann::json(*problem) : nlohmann::json(nullptr);
    auto load = executor->load();
    j["executor"] = {{"kind", to_string(config->executor.kind)},
                     {"jobs_queued", load.queued},
                     {"jobs_running", load.running},
                     {"jobs_cleaning", load.cleaning}};
    return j;
  }

  // What the host runs never comes from the repository (docs/security.md B4).
  Result<void> check_host_commands(const Config& c) const {
    const char* home = std::getenv("HOME");
    auto problems = host_command_problems(c, paths.root, home ? home : "");
    if (problems.empty()) return ok();
    return make_error(ErrorCode::invalid_argument,
                      paths.config_file().string() + ": " + problems.front());
  }

  Result<void> open() {
    auto cfg = load_config(paths.config_file().string(), env());
    if (!cfg) return cfg.take_error();
    LOOPR_TRY(check_host_commands(*cfg));
    config = std::make_shared<Config>(std::move(*cfg));
    LOOPR_TRY(check_prerequisites());
    LOOPR_ASSIGN(store, TaskStore::open(paths.state_dir().string(), {.sync = true}));
    journal = std::make_unique<engine::LoopJournal>(*store, pool, bus);
    LOOPR_TRY(open_executor());
    // The claude CLI's private folders a daemon killed before left (each with a copy of the
    // person's login) go before any new one is made (docs/security.md, S6.1).
    std::error_code gone;
    for (const char* cli : {"claude", "codex", "gemini"})
      std::filesystem::remove_all(paths.run_dir() / cli, gone);
    LOOPR_ASSIGN(auto first, llm::make_client(*config, env(), io, pool, executor.get(),
                                              paths.run_dir() / "claude"));
    llm = std::make_unique<llm::ReloadableClient>(std::move(first));
    std::string provider = config->llm.provider;
    scheduler = std::make_unique<engine::Scheduler>(io.get_executor(), engine::SchedulerOptions::from_config(*config),
                                                    engine::stored_provider_pause(*store, provider),
                                                    engine::persist_provider_pause(*journal, provider));
    runners = std::make_unique<tools::RunnerSlots>(config->concurrency);
    prompts = std::make_unique<engine::RepoPrompts>(paths.root);
    ctx = std::make_unique<engine::EngineContext>(engine::EngineContext{
        io, pool, *journal, config, paths, *llm, *scheduler, *runners, *executor, *prompts, costs,
        llm::retry_policy(config->llm), std::chrono::milliseconds(1000)});
    manager = std::make_unique<manager::LoopManager>(*ctx);
    manager->set_forge_token(secrets.get(config->forge.token_env).value_or(""));
    bus.subscribe([this](const Event& e) { append_loop_event(paths, e); });
    notifier = std::make_unique<Notifier>(*ctx);
    api = std::make_unique<Api>(*ctx, *manager, api_info());
    ServerOptions options;
    options.admit = admit("control socket");
    server = std::make_unique<HttpServer>(io, api->routes(), options);
    return ok();
  }

  // What the control API asks of this daemon (its process, its web page, its disk).
  ApiInfo api_info() {
    ApiInfo info;
    info.pid = ::getpid();
    info.started_at = started_at;
    info.repo = paths.root.string();
    info.request_shutdown = [this](std::chrono::milliseconds drain) {
      begin_shutdown(drain.count() > 0 ? "a drained stop requested over the API"
                                       : "shutdown requested over the API",
                     drain);
    };
    info.draining = [this] { return manager->draining(); };
    info.shutting_down = [this] { return stopping; };
    info.read_pool = &api_reads;
    info.sandbox = [this] { return sandbox_status(); };
    if (options.web) {  // else `POST /v1/web` answers that this daemon serves no web UI
      info.start_web = [this](std::uint16_t port) { return start_web(port); };
      info.stop_web = [this] { return stop_web(); };
    }
    info.web = [this] { return web_status(); };
    info.disk = [this] {
      const std::uint64_t mib = 1024 * 1024;
      return nlohmann::json{
          {"dir", disk.dir},
          {"free_mib", disk.free ? nlohmann::json(*disk.free / mib) : nlohmann::json(nullptr)},
          {"min_free_mib", disk.floor / mib},
          {"full", disk.full()},
          {"paused_loops", disk.paused}};
    };
    return info;
  }

  // Every connection, on either listener: a process in a loopr sandbox is refused, with an
  // event (docs/security.md, S2.1).
  std::function<std::optional<std::string>(int)> admit(std::string listener) {
    return [this, listener](int fd) -> std::optional<std::string> {
      PeerVerdict v = check_peer(fd);
      if (!v.refused) return std::nullopt;
      spdlog::warn("{}: refused a connection from process {}: {}", listener, v.pid, v.why);
      if (journal) {
        auto refused = api::encode("", api::PeerRefused{listener, v.pid, v.why});
        net::co_spawn(io, journal->note({std::move(refused)}), net::detached);
      }
      return "loopr: the daemon refused this connection: " + v.why +
             " (a daemon talks only to the person)";
    };
  }

  nlohmann::json web_status() const {
    if (!web_ui) return nullptr;
    return {{"url", web_ui->url()}, {"port", web_ui->port()}};
  }

  // The web UI on 127.0.0.1 with a fresh token; the token is never logged (it is the key).
  Result<api::WebStarted> start_web(std::uint16_t port) {
    if (web_ui) {
      if (port != 0 && port != web_ui->port())
        return make_error(ErrorCode::conflict, "the web UI already runs on port " +
                                                   std::to_string(web_ui->port()) +
                                                   " (`loopr web --stop` first to move it)");
      return api::WebStarted{web_ui->url(), web_ui->port(), false};
    }
    if (stopping) return make_error(ErrorCode::unsupported, "the daemon is shutting down");
    auto ui = options.web(FrontEndDeps{*ctx, api->routes(), api_reads});
    ServerOptions options;
    options.max_connections = 64;
    options.admit = admit("web UI");
    auto listener = std::make_unique<HttpServer>(io, ui->routes(), options);
    auto bound = listener->listen_tcp("127.0.0.1", port);
    if (!bound) return bound.take_error();
    // Nothing is served before this returns (one io thread), so the port is known in time.
    ui->set_port(*bound);
    web_ui = std::move(ui);
    web_server = std::move(listener);
    spdlog::info("web UI on http://127.0.0.1:{}/ (`loopr web` prints its address)", *bound);
    return api::WebStarted{web_ui->url(), web_ui->port(), true};
  }

  bool stop_web() {
    if (!web_server) return false;
    web_server->stop();
    // Connections still open hold the routes; the UI object stays until the daemon ends.
    retired_web.push_back(std::move(web_ui));
    retired_servers.push_back(std::move(web_server));
    spdlog::info("web UI stopped");
    return true;
  }
  std::vector<std::unique_ptr<FrontEnd>> retired_web;
  std::vector<std::unique_ptr<HttpServer>> retired_servers;

  // Refuses to serve a provider that cannot work (a missing key, no `claude`), unless forced;
  // a validation program that is missing now may be installed before a code loop runs.
  Result<void> check_prerequisites() const {
    if (auto p = check_provider(*config, env())) {
      if (!options.force || !p->forceable)
        return make_error(ErrorCode::invalid_argument, p->what + " (" + p->hint + ")");
      spdlog::warn("{} (started with --force)", p->what);
    }
    if (auto p = check_validation_command(*config, paths.root, env()))
      spdlog::warn("{} ({})", p->what, p->hint);
    else if (auto q = exec::check_validation_in_sandbox(*config, paths, env()))
      spdlog::warn("{} ({})", q->what, q->hint);
    return ok();
  }

  // SIGHUP: every setting that can change while loops run takes effect at once (the model
  // client with its URL, model, timeouts and prices; retries; runner slots; the scheduler; loop
  // slots; limits and loop settings, read per iteration); what cannot (kRestartKeys) keeps its
  // start value until a restart, and the log says which changed.
  void reload() {
    auto cfg = load_config(paths.config_file().string(), env());
    if (!cfg) {
      spdlog::error("SIGHUP: the config was not reloaded: {}", cfg.error().message);
      return;
    }
    if (auto host = check_host_commands(*cfg); !host) {
      spdlog::error("SIGHUP: the config was not reloaded: {}", host.error().message);
      return;
    }
    auto next = std::make_shared<Config>(std::move(*cfg));
    auto pending = restart_keys_changed(*config, *next);
    next->base_branch = config->base_branch;
    next->llm.provider = config->llm.provider;
    next->sandbox = config->sandbox;
    auto client =
        llm::make_client(*next, env(), io, pool, executor.get(), paths.run_dir() / "claude");
    if (!client) {
      spdlog::error("SIGHUP: the config was not reloaded: the model client: {}", client.error().message);
      return;
    }
    llm->replace(std::move(*client));
    ctx->config = next;
    config = next;
    ctx->retry.max_retries = next->llm.max_retries;
    runners->reconfigure(next->concurrency);
    scheduler->set_options(engine::SchedulerOptions::from_config(*next));
    manager->config_changed();
    spdlog::info("SIGHUP: config reloaded from {}", paths.config_file().string());
    for (const auto& key : pending)
      spdlog::warn("SIGHUP: {} changed in the file but needs a restart (`loopr daemon stop`, then `loopr daemon`); "
                   "the daemon keeps the value it started with",
                   key);
  }

  // `drain` > 0: the iterations in flight finish first (at most that long). Asked again while
  // a drain runs (a second SIGTERM, Ctrl-C, a stop without --drain): the drain ends now.
  void begin_shutdown(std::string why, std::chrono::milliseconds drain = {}) {
    if (stopping) {
      if (manager->draining() && drain.count() == 0) {
        spdlog::info("stopping now: {}", why);
        manager->cut_drain_short();
      }
      return;
    }
    stopping = true;
    spdlog::info("stopping: {}{}", why,
                 drain.count() > 0 ? " (draining for at most " + format_duration(drain) + ")" : "");
    net::co_spawn(io, shutdown(this, drain), net::detached);
  }

  static awaitable<void> shutdown(Daemon* self, std::chrono::milliseconds drain) {
    // Answer the request that asked for it before the connections close.
    net::steady_timer t(self->io, std::chrono::milliseconds(50));
    boost::system::error_code ec;
    co_await t.async_wait(net::redirect_error(net::use_awaitable, ec));
    WriteSet stopping;
    stopping.events = {api::encode("", api::DaemonStopping{::getpid(), drain.count()})};
    co_await self->journal->commit(std::move(stopping));
    co_await self->manager->shutdown(std::chrono::milliseconds(3500), drain);
    self->stop_web();
    self->server->stop();
    self->io.stop();
  }

  // `gc.every`: the daemon runs `loopr gc` by itself (off by default). Read at each wake, so a
  // SIGHUP that turns it on or changes it takes effect after the current wait.
  static awaitable<void> gc_schedule(Daemon* self) {
    net::steady_timer timer(self->io);
    while (!self->stopping) {
      auto every = self->config->gc.every;
      timer.expires_after(every.count() > 0 ? every : std::chrono::minutes(1));
      boost::system::error_code ec;
      co_await timer.async_wait(net::redirect_error(net::use_awaitable, ec));
      if (self->stopping || self->config->gc.every.count() <= 0) continue;
      auto options = manager::GcOptions::from(*self->config, now_ms());
      manager::GcReport report = co_await self->manager->gc(options);
      for (const auto& e : report.errors) spdlog::warn("gc (gc.every): {}", e);
    }
  }

  // limits.min_free_space: a look at the disk every few seconds; the loops paused for want of
  // space go on by themselves once there is space again (manager: watch_disk).
  static awaitable<void> disk_watch(Daemon* self) {
    net::steady_timer timer(self->io);
    while (!self->stopping) {
      const bool was_full = self->disk.full();
      self->disk = co_await self->manager->watch_disk();
      if (self->disk.full() && !was_full && self->disk.free)
        spdlog::warn("disk full: {} MiB free in {} (limits.min_free_space)",
                     *self->disk.free / (1024 * 1024), self->disk.dir);
      timer.expires_after(std::chrono::seconds(self->disk.paused > 0 ? 2 : 5));
      // Memory the ended loops freed goes back to the system: glibc keeps the free pages of its
      // per-thread arenas (a pool thread allocates a loop's work, another frees it), so a daemon
      // serving tree after tree grew ~0.1 MiB per tree with a flat live heap (the soak,
      // tools/bench/RESULTS.md). A trim of a daemon's heap of a few tens of MiB takes ~1 ms.
      malloc_trim(0);
      boost::system::error_code ec;
      co_await timer.async_wait(net::redirect_error(net::use_awaitable, ec));
    }
  }

  static awaitable<void> watch_signals(Daemon* self, std::shared_ptr<net::signal_set> signals) {
    while (true) {
      boost::system::error_code ec;
      int sig = co_await signals->async_wait(net::redirect_error(net::use_awaitable, ec));
      if (ec) co_return;
      if (sig == SIGHUP)
        self->reload();
      else if (sig == SIGTERM)
        self->begin_shutdown("SIGTERM", self->config->daemon.sigterm_drain);
      else
        self->begin_shutdown("SIGINT");
    }
  }

  static awaitable<void> boot(Daemon* self, std::shared_ptr<Result<void>> result) {
    auto started = co_await self->manager->start();
    if (!started) {
      *result = started.take_error();
      self->io.stop();
      co_return;
    }
    auto listening = self->server->listen(self->paths.socket());
    if (!listening) {
      *result = listening.take_error();
      self->io.stop();
      co_return;
    }
    WriteSet serving;
    serving.events = {api::encode("", api::DaemonStarted{::getpid()})};
    co_await self->journal->commit(std::move(serving));
    spdlog::info("serving {} on {}", self->paths.root.string(), self->paths.socket().string());
    net::co_spawn(self->io, gc_schedule(self), net::detached);
    net::co_spawn(self->io, disk_watch(self), net::detached);
    // The loop summaries `loopr list` and health read are in memory already: the manager's
    // start read them from the store's summary index.
  }
};

}  // namespace

// The variable that holds the forge's token (forge.token_env; GITHUB_TOKEN when the config does
// not read): taken out of the environment with the provider keys, whatever `merge` says, so a
// token in the daemon's environment never reaches a command.
static std::string forge_token_variable(const RepoPaths& paths) {
  auto cfg = load_config(paths.config_file().string(), [](const char*) -> std::optional<std::string> {
    return std::nullopt;
  });
  return cfg ? cfg->forge.token_env : ForgeConfig{}.token_env;
}

// The daemon's log (daemon.log, flushed every second; a warning or an error is in the file at
// once: a daemon killed right after keeps it).
static void start_log(const RepoPaths& paths) {
  spdlog::drop("loopr");
  setup_logging(spdlog::level::info, (paths.logs_dir() / "daemon.log").string());
  spdlog::flush_every(std::chrono::seconds(1));
  spdlog::default_logger()->flush_on(spdlog::level::warn);
}

// After the io_context stopped: no more requests, then the work still in flight ends in order.
static void wind_down(Daemon& daemon, const RepoPaths& paths) {
  if (daemon.server) daemon.server->stop();
  if (daemon.web_server) daemon.web_server->stop();
  std::error_code ec;
  std::filesystem::remove(paths.socket(), ec);
  // Work abandoned by stopped loops (a model call in flight) ends against closed sockets; give
  // it a moment, then tear down in order.
  daemon.io.restart();
  daemon.io.run_for(std::chrono::milliseconds(500));
  // Commands running elsewhere (a cluster's jobs) end now, so the pool can be joined and
  // nothing is left running on the cluster (the Daemon itself is never destroyed, see below).
  if (daemon.executor) daemon.executor->cancel_all();
  daemon.pool.join();
  daemon.api_reads.join();
  // Model calls abandoned by the stop may still be parked in the io_context; destroying them
  // would touch the client and scheduler they belong to. The store is closed cleanly (nothing
  // runs any more: the io_context is stopped, the pool joined); the rest is left to the exit.
  daemon.store.reset();
  spdlog::info("stopped");
  spdlog::default_logger()->flush();
}

void bound_malloc_arenas() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (std::getenv("MALLOC_ARENA_MAX") ||
      (tunables && std::strstr(tunables, "glibc.malloc.arena_max")))
    return;
  mallopt(M_ARENA_MAX, kMallocArenas);
}

Result<void> run_daemon(const DaemonOptions& options) {
  bound_malloc_arenas();
  // First of all: no provider key stays in this process's environment, where a command (or
  // anything that can read /proc/<pid>/environ) could find it.
  std::vector<std::string> secret_names(std::begin(exec::kSecretVariables), std::end(exec::kSecretVariables));
  RepoPaths paths(options.repo);
  // The forge's token too (merge: pr): its variable is named by the config (read once here).
  const std::string forge_token_env = forge_token_variable(paths);
  secret_names.push_back(forge_token_env);
  exec::SecretEnv secrets = exec::SecretEnv::take(secret_names);
  if (!std::filesystem::exists(paths.config_file()))
    return make_error(ErrorCode::invalid_argument,
                      paths.config_file().string() + " does not exist (run `loopr init` in the repository first)");
  std::error_code ec;
  for (const auto& dir : {paths.run_dir(), paths.logs_dir(), paths.state_dir()})
    std::filesystem::create_directories(dir, ec);

  PidLock lock;
  LOOPR_TRY(lock.acquire(paths.pid_file()));
  start_log(paths);

  auto daemon = std::make_unique<Daemon>(options, std::move(secrets));
  if (auto opened = daemon->open(); !opened) {
    spdlog::error("cannot start: {}", opened.error().message);
    return opened;
  }
  // Ignore SIGPIPE: a client that goes away must not end the daemon.
  std::signal(SIGPIPE, SIG_IGN);
  auto signals = std::make_shared<net::signal_set>(daemon->io, SIGTERM, SIGINT, SIGHUP);
  net::co_spawn(daemon->io, Daemon::watch_signals(daemon.get(), signals), net::detached);
  auto result = std::make_shared<Result<void>>(ok());
  net::co_spawn(daemon->io, Daemon::boot(daemon.get(), result), net::detached);
  daemon->io.run();
  signals->cancel();
  wind_down(*daemon, paths);
  Result<void> out = *result;
  (void)daemon.release();
  return out;
}

}  // namespace loopr::daemon
