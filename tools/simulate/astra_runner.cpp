#include "simulate/astra_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

extern char** environ;

namespace chakrashim::tools::simulate {

namespace {

bool executable_file(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return {};
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (executable_file(candidate)) return candidate;
  }
  return {};
}

}  // namespace

std::string find_astra_sim(const std::string& given, std::string& why) {
  if (!given.empty()) {
    if (executable_file(given)) return given;
    why = "--astra-sim " + given + " is not an executable file";
    return {};
  }
  if (const char* env = std::getenv("ASTRA_SIM_BIN"); env != nullptr && *env != '\0') {
    if (executable_file(env)) return env;
    why = std::string("ASTRA_SIM_BIN=") + env + " is not an executable file";
    return {};
  }
  for (const char* name : kAstraSimNames)
    if (std::string found = on_path(name); !found.empty()) return found;
  why = std::string("no ASTRA-sim: give its binary with --astra-sim or ASTRA_SIM_BIN, or put ") + kAstraSimNames[0] +
        " on PATH (building it: docs/simulate.md, \"ASTRA-sim\")";
  return {};
}

std::string ring_system_json() {
  return "{\n"
         "  \"scheduling-policy\": \"LIFO\",\n"
         "  \"endpoint-delay\": 10,\n"
         "  \"active-chunks-per-dimension\": 1,\n"
         "  \"preferred-dataset-splits\": 4,\n"
         "  \"all-reduce-implementation\": [\"ring\"],\n"
         "  \"all-gather-implementation\": [\"ring\"],\n"
         "  \"reduce-scatter-implementation\": [\"ring\"],\n"
         "  \"all-to-all-implementation\": [\"ring\"],\n"
         "  \"collective-optimization\": \"localBWAware\",\n"
         "  \"local-mem-bw\": 1600,\n"
         "  \"boost-mode\": 0,\n"
         "  \"roofline-enabled\": 0,\n"
         "  \"peak-perf\": 900\n"
         "}\n";
}

std::string remote_memory_json() { return "{\"memory-type\": \"NO_MEMORY_EXPANSION\"}\n"; }

std::string ring_network_yml(std::uint64_t npus) {
  return "topology: [ Ring ]\nnpus_count: [ " + std::to_string(npus) +
         " ]\nbandwidth: [ 50.0 ]  # GB/s\nlatency: [ 500.0 ]  # ns\n";
}

std::string make_run_folder(std::string& error) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/chakrashim-simulate-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    error = "cannot make a folder for ASTRA-sim from " + pattern + ": " + std::strerror(errno);
    return {};
  }
  return buf.data();
}

AstraRun run_in_folder(const std::vector<std::string>& argv, const std::string& folder,
                       std::chrono::seconds timeout) {
  AstraRun run;
  const std::string log = folder + "/astra-sim.log";
  // Our own new file in our own private folder: O_EXCL, no link followed.
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0) {
    run.error = "cannot create " + log + ": " + std::strerror(errno);
    return run;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out, 1);
  posix_spawn_file_actions_adddup2(&actions, out, 2);
  // ASTRA-sim writes its logs into the folder it runs in.
  posix_spawn_file_actions_addchdir_np(&actions, folder.c_str());
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out);
  if (rc != 0) {
    run.error = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return run;
  }
  run.started = true;
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      run.error = std::string("cannot wait for ASTRA-sim: ") + std::strerror(errno);
      break;
    }
    if (std::chrono::steady_clock::now() - start > timeout) {
      run.timed_out = true;
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) run.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
  std::ifstream in(log, std::ios::binary);
  run.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return run;
}

}  // namespace chakrashim::tools::simulate
