#include "tools/paraview_render.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "engine/exec/error.hpp"
#include "engine/io/paraview_state.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace tissue::tools {

namespace {

// Lines the script prints for tissue: "tissue-render: time T" on success, "tissue-render: error: ..." when it
// fails in a way it can name.
constexpr const char* kScriptTag = "tissue-render: ";

constexpr const char* kScript =
    R"PY(# tissue render: the last snapshot of a run directory as its view.pvsm shows it.
# usage: pvbatch render.py RUN_DIR OUT_PNG WIDTH HEIGHT  (written and run by `tissue render`)
import os
import sys


def main():
    run_dir, png = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    width, height = int(sys.argv[3]), int(sys.argv[4])
    from paraview import simple as pv

    os.chdir(run_dir)  # the state names its series relative to the run directory
    pv.LoadState("view.pvsm")
    views = pv.GetRenderViews()
    view = pv.GetActiveView() or (views[0] if views else None)
    if view is None:
        raise RuntimeError("view.pvsm holds no render view")
    scene = pv.GetAnimationScene()
    scene.UpdateAnimationUsingDataTimeSteps()
    scene.GoToLast()
    for source in pv.GetSources().values():
        display = pv.GetDisplayProperties(source, view)
        if display.Visibility and display.ColorArrayName[1]:
            display.SetScalarBarVisibility(view, True)
    view.ViewSize = [width, height]
    pv.ResetCamera(view)  # the data of the last snapshot, seen from the state's direction
    pv.SaveScreenshot(png, view, ImageResolution=[width, height])
    print("tissue-render: time %g" % view.ViewTime, flush=True)


try:
    main()
except Exception as e:  # one line for tissue to report
    print("tissue-render: error: %s: %s" % (type(e).__name__, str(e).replace("\n", " ")), flush=True)
    sys.exit(3)
)PY";

bool is_executable(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

/// `name` looked up on PATH as a shell would (a name with a '/' is taken as a path); empty if not found.
fs::path which(const std::string& name) {
  if (name.find('/') != std::string::npos) return is_executable(name) ? fs::path(name) : fs::path();
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (is_executable(candidate)) return candidate;
  }
  return {};
}

/// A temporary file (mkstemps) with `content`, removed when this goes out of scope.
class TemporaryFile {
 public:
  TemporaryFile(const std::string& stem, const std::string& suffix, const std::string& content) {
    std::string name = (fs::temp_directory_path() / (stem + "XXXXXX" + suffix)).string();
    const int fd = ::mkstemps(name.data(), static_cast<int>(suffix.size()));
    if (fd < 0)
      throw std::runtime_error("cannot create a temporary file " + name + ": " + std::strerror(errno));
    path_ = name;
    std::size_t done = 0;
    while (done < content.size()) {
      const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const std::string error = std::strerror(errno);
        ::close(fd);
        throw std::runtime_error("cannot write " + path_.string() + ": " + error);
      }
      done += static_cast<std::size_t>(n);
    }
    ::close(fd);
  }
  ~TemporaryFile() {
    std::error_code ec;
    fs::remove(path_, ec);
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

/// Ignores SIGINT, SIGTERM and SIGHUP while it lives (a Ctrl-C reaches ParaView, in the same process group,
/// and stops it; tissue then cleans up); the previous handlers come back at the end.
class IgnoreStopSignals {
 public:
  IgnoreStopSignals() {
    for (int k = 0; k < 3; ++k) previous_[k] = std::signal(kSignals[k], SIG_IGN);
  }
  ~IgnoreStopSignals() {
    for (int k = 0; k < 3; ++k) std::signal(kSignals[k], previous_[k]);
  }
  IgnoreStopSignals(const IgnoreStopSignals&) = delete;
  IgnoreStopSignals& operator=(const IgnoreStopSignals&) = delete;
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};

 private:
  void (*previous_[3])(int) = {nullptr, nullptr, nullptr};
};

/// Runs argv[0] (looked up on PATH) with stdin from /dev/null and stdout and stderr into `log`, the stop
/// signals at their defaults in it.
/// @return the exit status, or 128 + N when killed by signal N.
/// @throws RenderInterrupted when SIGINT, SIGTERM or SIGHUP stopped it.
int run_program(const std::vector<std::string>& args, const fs::path& log) {
  const IgnoreStopSignals ignore;
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (const int signo : IgnoreStopSignals::kSignals) sigaddset(&defaults, signo);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_TRUNC, 0);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) throw std::runtime_error("cannot start " + args[0] + ": " + std::strerror(rc));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error("waiting for " + args[0] + ": " + std::strerror(errno));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (!WIFSIGNALED(status)) return 1;
  const int signo = WTERMSIG(status);
  for (const int stop : IgnoreStopSignals::kSignals)
    if (signo == stop) throw RenderInterrupted(signo);
  return 128 + signo;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The script's own line after "tissue-render: " (the last), else the last line of ParaView's output that
/// reads like an error, else its last non-empty line; without terminal colour codes.
std::string message_of(const std::string& log, bool want_error) {
  std::istringstream in(log);
  std::string tagged, error, last;
  for (std::string line; std::getline(in, line);) {
    std::string clean;
    for (std::size_t i = 0; i < line.size(); ++i) {  // drop ANSI escapes (loguru colours its lines)
      if (line[i] == '\x1b') {
        while (i < line.size() && !std::isalpha(static_cast<unsigned char>(line[i]))) ++i;
        continue;
      }
      clean += line[i];
    }
    const auto begin = clean.find_first_not_of(" \t\r");
    if (begin == std::string::npos) continue;
    clean = clean.substr(begin, clean.find_last_not_of(" \t\r") - begin + 1);
    if (clean.rfind(kScriptTag, 0) == 0) tagged = clean.substr(std::strlen(kScriptTag));
    if (clean.find("ERR|") != std::string::npos || clean.find("Error") != std::string::npos ||
        clean.find("error") != std::string::npos)
      error = clean;
    last = clean;
  }
  if (!tagged.empty() || !want_error) return tagged;
  return !error.empty() ? error : last;
}

}  // namespace

const char* render_script() {
  return kScript;
}

void parse_image_size(const std::string& text, int& width, int& height) {
  const auto x = text.find('x');
  const auto number = [](const std::string& s) {
    if (s.empty() || s.size() > 5 || s.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::stoi(s);
  };
  const int w = x == std::string::npos ? -1 : number(text.substr(0, x));
  const int h = x == std::string::npos ? -1 : number(text.substr(x + 1));
  if (w < 1 || h < 1 || w > 16384 || h > 16384)
    throw InputError("--size: expected WIDTHxHEIGHT in pixels, each 1 to 16384 (e.g. 1280x960), got '" +
                     text + "'");
  width = w;
  height = h;
}

fs::path find_paraview() {
  if (const char* env = std::getenv("TISSUE_PVBATCH"); env != nullptr && *env != '\0') {
    const fs::path p = which(env);
    if (p.empty())
      throw std::runtime_error(std::string("TISSUE_PVBATCH=") + env +
                               ": not an executable (it names ParaView's pvbatch or pvpython)");
    return p;
  }
  for (const char* name : {"pvbatch", "pvpython"})
    if (const fs::path p = which(name); !p.empty()) return p;
  throw std::runtime_error(
      "ParaView is not installed: neither pvbatch nor pvpython is on PATH (Debian: apt install paraview "
      "python3-paraview xvfb xauth; or set TISSUE_PVBATCH to one of them)");
}

std::string render(const RenderRequest& request) {
  std::error_code ec;
  const fs::path dir = request.run_dir;
  if (!fs::is_directory(dir, ec)) throw InputError(dir.string() + ": no such run directory");
  if (!fs::is_regular_file(dir / io::kParaviewStateFileName, ec))
    throw InputError(dir.string() + ": holds no " + io::kParaviewStateFileName +
                     " (not a run directory, or one written before tissue wrote ParaView states)");
  std::string extension = request.png.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (extension != ".png") throw InputError(request.png.string() + ": the image must be a .png file");
  const fs::path png = fs::absolute(request.png);
  if (!fs::is_directory(png.parent_path(), ec))
    throw InputError(request.png.string() + ": the directory " + png.parent_path().string() +
                     " does not exist");
  if (request.width < 1 || request.height < 1 || request.width > 16384 || request.height > 16384)
    throw InputError("the image size must be 1 to 16384 pixels each way");

  const fs::path paraview = find_paraview();
  const TemporaryFile script("tissue_render_", ".py", kScript);
  const TemporaryFile log("tissue_render_", ".log", "");
  const std::vector<std::string> args{script.path().string(), fs::absolute(dir).string(), png.string(),
                                      std::to_string(request.width), std::to_string(request.height)};
  const char* display = std::getenv("DISPLAY");
  const bool headless = display == nullptr || *display == '\0';
  const fs::path xvfb_run = headless ? which("xvfb-run") : fs::path();

  std::vector<std::string> command;
  int status = 0;
  // xvfb-run -a takes the first display number without a lock file; two of them starting together can take
  // the same one, and ParaView then aborts with "bad X server connection". The search starts at a number of
  // this process's, and such a failure is tried again from another, up to four times (seen failing twice in
  // a row under load, once in a CI run: a busy machine also starts Xvfb late), a second apart.
  for (int attempt = 0; attempt < 4; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::seconds(1));
    command.clear();
    if (!xvfb_run.empty()) {
      const int screen_w = std::max(request.width, 1280), screen_h = std::max(request.height, 1024);
      command = {xvfb_run.string(),
                 "-a",
                 "-n",
                 std::to_string(100 + (::getpid() + 397 * attempt) % 800),
                 "-s",
                 "-screen 0 " + std::to_string(screen_w) + "x" + std::to_string(screen_h) + "x24"};
    }
    command.push_back(paraview.string());
    if (headless && xvfb_run.empty()) command.push_back("--force-offscreen-rendering");
    command.insert(command.end(), args.begin(), args.end());
    fs::remove(png, ec);  // so that an image left by an earlier render is not taken for this one's
    status = run_program(command, log.path());
    if (status == 0 || xvfb_run.empty() ||
        read_text(log.path()).find("bad X server connection") == std::string::npos)
      break;
  }
  const std::string output = read_text(log.path());
  if (status != 0 || !fs::is_regular_file(png, ec) || fs::file_size(png, ec) == 0) {
    std::string why = message_of(output, true);
    if (why.empty()) why = "no output";
    if (headless && xvfb_run.empty())
      why +=
          " (no display: DISPLAY is unset and xvfb-run is not installed; ParaView builds without offscreen "
          "rendering, like Debian's, need one of them)";
    throw std::runtime_error(paraview.string() + " failed to render " + dir.string() + " (exit status " +
                             std::to_string(status) + (status == 0 ? ", no image written" : "") +
                             "): " + why);
  }
  std::string line = "rendered " + dir.string() + " to " + request.png.string() + " (" +
                     std::to_string(request.width) + "x" + std::to_string(request.height);
  const std::string said = message_of(output, false);
  if (!said.empty()) line += ", " + said;
  return line + ")";
}

}  // namespace tissue::tools
