// A one-node Slurm cluster on this machine for a test: a private munged (own key and socket),
// slurmctld and slurmd in the foreground as children of the test process, with a generated
// slurm.conf on free loopback ports in a temp dir. Each daemon dies with the test process
// (PR_SET_PDEATHSIG), the destructor kills and reaps them; jobs are recorded by
// jobcomp/filetxt. Needs root (slurmd runs jobs as their user) and slurm-wlm + munge.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

namespace loopr::testing {

/// How long a condition on the cluster (a job started, a cancelled job gone from squeue) may take
/// before a test counts it as failed. A 2-core machine shared with a parallel test run keeps a
/// cancelled job COMPLETING for tens of seconds (seen: over 30 s); a passing test never waits
/// this out, it polls until the condition holds. Longer than executor.slurm.cancel_timeout's
/// default (3 min), so loopr's own wait ends first.
inline constexpr std::chrono::seconds kSlowCluster{240};

class SlurmCluster {
 public:
  /// A running cluster, or nullptr with why it cannot run here (for GTEST_SKIP).
  static std::unique_ptr<SlurmCluster> start(std::string& why_not) {
    if (::geteuid() != 0) {
      why_not = "the Slurm tests start slurmctld, slurmd and munged and need root";
      return nullptr;
    }
    for (const char* tool : {"/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged",
                             "/usr/bin/srun", "/usr/bin/squeue", "/usr/bin/scontrol"})
      if (::access(tool, X_OK) != 0) {
        why_not =
            std::string(tool) + " is missing: install slurm-wlm and munge (tools/install-deps.sh)";
        return nullptr;
      }
    auto c = std::unique_ptr<SlurmCluster>(new SlurmCluster());
    if (!c->boot(why_not)) return nullptr;
    return c;
  }

  ~SlurmCluster() {
    // Jobs a failed test left: cancelled while the controller still runs (slurmd's steps do
    // not end with slurmd), waited for with a deadline.
    run("scancel --quiet --user=root");
    wait_until([&] { return queue().empty(); }, std::chrono::seconds(15));
    // slurmd first (it ends the job steps it runs), then the controller, then munged.
    for (auto it = pids_.rbegin(); it != pids_.rend(); ++it) ::kill(*it, SIGTERM);
    for (auto it = pids_.rbegin(); it != pids_.rend(); ++it) {
      bool gone = wait_until([&] { return ::waitpid(*it, nullptr, WNOHANG) == *it; },
                             std::chrono::seconds(10));
      if (!gone) {
        ::kill(*it, SIGKILL);
        ::waitpid(*it, nullptr, 0);
      }
    }
  }

  const std::string& conf() const { return conf_; }
  const std::string& node() const { return node_; }
  std::filesystem::path dir() const { return dir_.path(); }

  /// A shell command with this cluster's SLURM_CONF.
  CommandOutput run(const std::string& command) const {
    return run_command("SLURM_CONF=" + shell_quote(conf_) + " " + command);
  }

  /// squeue's job names (empty: nothing queued or running).
  std::string queue() const { return run("squeue -h -o '%j %T'").output; }

  /// What jobcomp/filetxt recorded of finished jobs.
  std::string completed_jobs() const {
    std::ifstream in(dir_.path() / "jobcomp.txt");
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }

  void drain(const std::string& reason) const {
    run("scontrol update NodeName=" + node_ + " State=DRAIN Reason=" + shell_quote(reason));
  }
  void resume() const { run("scontrol update NodeName=" + node_ + " State=RESUME"); }

  /// The daemons' logs, for a failure message.
  std::string logs() const {
    std::string out;
    for (const char* f : {"log/ctld.log", "log/d.log", "log/munged.log"})
      out += std::string("--- ") + f + "\n" +
             run("tail -n 20 " + shell_quote((dir_.path() / f).string())).output;
    return out;
  }

 private:
  SlurmCluster() = default;

  static int free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    int port = -1;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port = ntohs(a.sin_port);
    ::close(fd);
    return port;
  }

  // A foreground daemon as a child that dies with this process.
  pid_t spawn(const std::vector<std::string>& argv) {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::setenv("SLURM_CONF", conf_.c_str(), 1);
      std::string log =
          (dir_.path() / "log" / (std::filesystem::path(argv[0]).filename().string() + ".out"))
              .string();
      FILE* f = std::freopen(log.c_str(), "a", stdout);
      if (f) ::dup2(STDOUT_FILENO, STDERR_FILENO);
      std::vector<char*> args;
      for (const auto& s : argv) args.push_back(const_cast<char*>(s.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    pids_.push_back(pid);
    return pid;
  }

  bool boot(std::string& why) {
    namespace fs = std::filesystem;
    fs::path d = dir_.path();
    for (const char* sub : {"state", "spool", "log", "munge"}) fs::create_directories(d / sub);
    fs::permissions(d, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
    fs::permissions(d / "munge",
                    fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
    std::string key = (d / "munge" / "key").string();
    run_command("head -c 1024 /dev/urandom > " + shell_quote(key) + " && chmod 400 " +
                shell_quote(key));
    std::string sock = (d / "munge" / "sock").string();
    node_ = run_command("hostname -s").output;
    while (!node_.empty() && (node_.back() == '\n' || node_.back() == ' ')) node_.pop_back();
    int ctld_port = free_port(), slurmd_port = free_port();
    while (slurmd_port == ctld_port) slurmd_port = free_port();
    auto p = [&](const char* rel) { return (d / rel).string(); };
    conf_ = p("slurm.conf");
    std::ofstream(conf_) << "ClusterName=loopr\n"
                         << "SlurmctldHost=" << node_ << "(127.0.0.1)\n"
                         << "SlurmctldPort=" << ctld_port << "\nSlurmdPort=" << slurmd_port << "\n"
                         << "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=" << sock
                         << "\n"
                         << "StateSaveLocation=" << p("state") << "\nSlurmdSpoolDir=" << p("spool")
                         << "\n"
                         << "SlurmctldPidFile=" << p("ctld.pid") << "\nSlurmdPidFile=" << p("d.pid")
                         << "\n"
                         << "SlurmctldLogFile=" << p("log/ctld.log")
                         << "\nSlurmdLogFile=" << p("log/d.log") << "\n"
                         << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
                         << "SchedulerType=sched/backfill\nSelectType=select/cons_tres\n"
                         << "SelectTypeParameters=CR_Core\nReturnToService=2\nSlurmUser=root\n"
                         << "JobCompType=jobcomp/filetxt\nJobCompLoc=" << p("jobcomp.txt") << "\n"
                         << "MinJobAge=2\nInactiveLimit=0\nKillWait=5\n"
                         << "NodeName=" << node_
                         << " NodeAddr=127.0.0.1 CPUs=2 RealMemory=2000 State=UNKNOWN\n"
                         << "PartitionName=debug Nodes=" << node_
                         << " Default=YES MaxTime=INFINITE State=UP\n";
    spawn({"/usr/sbin/munged", "-F", "-f", "--socket=" + sock, "--key-file=" + key,
           "--log-file=" + p("log/munged.log"), "--pid-file=" + p("munge/pid"),
           "--seed-file=" + p("munge/seed")});
    if (!wait_until([&] { return fs::exists(sock); }, std::chrono::seconds(10))) {
      why = "munged did not start: " + logs();
      return false;
    }
    spawn({"/usr/sbin/slurmctld", "-D", "-i", "-f", conf_});
    spawn({"/usr/sbin/slurmd", "-D", "-f", conf_, "-N", node_});
    bool idle =
        wait_until([&] { return run("sinfo -h -o %t").output.find("idle") != std::string::npos; },
                   std::chrono::seconds(60));
    if (!idle) {
      why = "the one-node cluster did not become idle in 60 s: " + logs();
      return false;
    }
    return true;
  }

  TempDir dir_{"loopr-slurm"};
  std::string conf_, node_;
  std::vector<pid_t> pids_;
};

}  // namespace loopr::testing
