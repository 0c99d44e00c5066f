#include "engine/run/ensemble.hpp"

#include <fcntl.h>
#include <omp.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "engine/exec/backend.hpp"
#include "engine/exec/error.hpp"
#include "engine/io/atomic_file.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/io/run_record.hpp"
#include "engine/run/runner.hpp"
#include "engine/util/interrupt.hpp"

namespace fs = std::filesystem;

namespace tissue {

namespace {

constexpr const char* kSweepRecord = "sweep.json";
constexpr const char* kSweepTable = "sweep.csv";
constexpr const char* kSweepLock = ".sweep.lock";
constexpr const char* kMemberScenario = "scenario.toml";

/// "gene_network.tgf_beta = 0.4, simulation.seed = 2" for messages.
std::string describe_values(const sweep::SweepSpec& spec, const sweep::Member& m) {
  std::string text;
  for (std::size_t p = 0; p < spec.parameters.size(); ++p)
    text += (p ? ", " : "") + spec.parameters[p].key + " = " + m.values[p];
  return text.empty() ? "the base scenario" : text;
}

/// A CSV cell of a TOML literal: strings without their quotes (toml++ wrote basic strings: unescape the
/// common escapes), anything else as written.
std::string csv_value(const std::string& literal) {
  if (literal.size() >= 2 && literal.front() == '"' && literal.back() == '"') {
    std::string out;
    for (std::size_t i = 1; i + 1 < literal.size(); ++i) {
      if (literal[i] == '\\' && i + 2 < literal.size()) {
        const char c = literal[++i];
        out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
      } else {
        out += literal[i];
      }
    }
    return sweep::csv_field(out);
  }
  return sweep::csv_field(literal);
}

/// Shortest text that reads back as the same double; empty for NaN.
std::string number_text(double v) {
  if (std::isnan(v)) return "";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

/// An exclusive flock on `dir`/.sweep.lock while it lives (processes of one sweep rewriting sweep.csv).
class SweepLock {
 public:
  explicit SweepLock(const fs::path& dir) {
    fd_ = ::open((dir / kSweepLock).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error("cannot open " + (dir / kSweepLock).string());
    if (::flock(fd_, LOCK_EX) != 0) {
      ::close(fd_);
      throw std::runtime_error("cannot lock " + (dir / kSweepLock).string());
    }
  }
  ~SweepLock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  SweepLock(const SweepLock&) = delete;
  SweepLock& operator=(const SweepLock&) = delete;

 private:
  int fd_ = -1;
};

/// sweep.json: what identifies the sweep a directory holds (no times: processes of one sweep write the
/// same bytes).
std::string sweep_record(const sweep::SweepSpec& spec) {
  nlohmann::ordered_json j;
  j["sweep"] = {{"path", fs::absolute(spec.file).lexically_normal().string()},
                {"sha256", io::sha256_hex(spec.text)}};
  j["base"] = {{"path", fs::absolute(spec.base).lexically_normal().string()},
               {"sha256", io::sha256_hex(spec.base_text)}};
  nlohmann::ordered_json parameters = nlohmann::ordered_json::array();
  for (const auto& p : spec.parameters) parameters.push_back(p.key);
  j["parameters"] = parameters;
  j["members"] = spec.members.size();
  return j.dump(2) + "\n";
}

}  // namespace

std::optional<std::size_t> ListQueue::next() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (next_ >= members_.size()) return std::nullopt;
  return members_[next_++];
}

const char* to_string(MemberStatus s) {
  switch (s) {
    case MemberStatus::pending:
      return "pending";
    case MemberStatus::running:
      return "running";
    case MemberStatus::interrupted:
      return "interrupted";
    case MemberStatus::completed:
      return "completed";
    case MemberStatus::failed:
      return "failed";
  }
  return "?";
}

Ensemble::Ensemble(const ModuleRegistry& modules, sweep::SweepSpec spec, SweepRequest request, bool validate,
                   bool prepare)
    : modules_(modules), spec_(std::move(spec)), request_(std::move(request)) {
  out_ = !request_.out.empty() ? request_.out
         : !spec_.out.empty()  ? fs::path(spec_.out)
                               : fs::path("sweeps") / spec_.file.stem();
  if (spec_.members.empty()) throw InputError(spec_.file.string() + ": the sweep has no members");
  if (validate) {
    // every member once: a value a module refuses is an error of the sweep file, reported before any run
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t count = spec_.members.size();
    std::vector<std::exception_ptr> errors(count);
    std::vector<double> memory(count, 0.0);
    const auto check = [&](std::size_t i) {
      const auto& m = spec_.members[i];
      try {
        const auto scenario = io::Scenario::from_string(m.scenario_text, spec_.base.string());
        const auto sim = modules_.build_simulation(scenario);
        if (i == 0) {  // only this member's thread writes metric_names_
          if (!spec_.metrics.empty()) {
            try {
              check_metric_names(*sim, spec_.metrics);
            } catch (const InputError& e) {
              throw InputError(spec_.metrics_where + ": metrics: " + e.what());
            }
          }
          metric_names_ = spec_.metrics;
          if (metric_names_.empty())
            for (const auto& metric : sim->metrics) metric_names_.push_back(metric.name);
        }
        memory[i] = sim->memory.device;
      } catch (const InputError& e) {
        if (spec_.parameters.empty()) {
          errors[i] = std::current_exception();  // the base scenario's own error
          return;
        }
        // the sweep file's entry of the value refused, when the message names its key
        std::string where = spec_.file.string();
        for (const auto& p : spec_.parameters)
          if (std::string(e.what()).find(p.key) != std::string::npos) where = p.where;
        errors[i] = std::make_exception_ptr(
            InputError(where + ": member " + m.name + " (" + describe_values(spec_, m) + "): " + e.what()));
      } catch (...) {
        errors[i] = std::current_exception();
      }
    };
    // members are independent: several at once, as they run (a member's build allocates and uploads on the
    // device, ~10 ms each; 64 one after another were a visible part of a short sweep's wall time)
    const std::size_t threads =
        std::min<std::size_t>({count, 16, std::max(1u, std::thread::hardware_concurrency())});
    std::atomic<std::size_t> next{0};
    const auto work = [&] {
      exec::ThreadStream stream;
      if (exec::backend() == exec::Backend::cpu && threads > 1) omp_set_num_threads(1);
      for (std::size_t i = next++; i < count; i = next++) check(i);
    };
    if (threads <= 1) {
      work();
    } else {
      std::vector<std::thread> pool;
      for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(work);
      for (auto& t : pool) t.join();
    }
    for (const auto& e : errors)
      if (e) std::rethrow_exception(e);
    member_memory_ = *std::max_element(memory.begin(), memory.end());
    validation_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } else {
    metric_names_ = spec_.metrics;
  }
  if (prepare) {
    std::error_code ec;
    fs::create_directories(out_, ec);
    if (ec)
      throw std::runtime_error("cannot create the sweep directory " + out_.string() + ": " + ec.message());
    const std::string record = sweep_record(spec_);
    SweepLock lock(out_);
    if (fs::exists(out_ / kSweepRecord)) {
      std::ifstream in(out_ / kSweepRecord, std::ios::binary);
      const std::string held((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (held != record)
        throw InputError(out_.string() + " holds another sweep (" + (out_ / kSweepRecord).string() +
                         " records another sweep file, base scenario or members): choose another --out, or "
                         "remove that directory");
    } else {
      for (const auto& entry : fs::directory_iterator(out_))
        if (entry.path().filename() != kSweepLock)
          throw InputError(out_.string() + " is not empty and holds no sweep (no " + kSweepRecord +
                           "): choose another --out");
      io::write_file_atomic(out_ / kSweepRecord, record);
    }
  }
}

MemberStatus Ensemble::status(std::size_t index) const {
  std::optional<io::RunRecord> record;
  try {
    record = io::RunRecord::read(member_dir(index));
  } catch (const InputError&) {  // not a run record (written by hand?): as a killed run, resumed or restarted
    return MemberStatus::running;
  }
  if (!record) return MemberStatus::pending;
  if (record->status == "completed") return MemberStatus::completed;
  if (record->status == "failed") return MemberStatus::failed;
  if (record->status == "interrupted") return MemberStatus::interrupted;
  return MemberStatus::running;
}

std::vector<std::size_t> Ensemble::to_run(const std::vector<std::size_t>& among) const {
  std::vector<std::size_t> all;
  if (among.empty())
    for (std::size_t i = 0; i < spec_.members.size(); ++i) all.push_back(i);
  const auto& candidates = among.empty() ? all : among;
  std::vector<std::size_t> out;
  for (const std::size_t i : candidates) {
    const MemberStatus s = status(i);
    if (s == MemberStatus::completed || (s == MemberStatus::failed && !request_.retry_failed)) continue;
    out.push_back(i);
  }
  return out;
}

int Ensemble::choose_concurrency(std::size_t members) const {
  const int cap = static_cast<int>(std::max<std::size_t>(1, members));
  if (request_.concurrent > 0) return std::min(request_.concurrent, cap);
  if (exec::backend() != exec::Backend::cuda) return 1;
  const double free = static_cast<double>(exec::available_memory_bytes());
  const double per_member = std::max(member_memory_, 64.0 * 1024 * 1024);  // contexts, pools, CUB scratch
  const int fit = static_cast<int>(std::floor(0.8 * free / per_member));
  return std::max(1, std::min({fit, 64, cap}));
}

void Ensemble::log(const std::string& line) const {
  if (!request_.log) return;
  std::lock_guard<std::mutex> lock(log_mutex_);
  std::fprintf(request_.log, "%s%s\n", request_.log_prefix.c_str(), line.c_str());
  std::fflush(request_.log);
}

void Ensemble::run_member(std::size_t index) {
  const sweep::Member& m = spec_.members[index];
  const fs::path dir = member_dir(index);
  const MemberStatus before = status(index);
  if (before == MemberStatus::completed || (before == MemberStatus::failed && !request_.retry_failed)) return;

  // a fresh run of the member's scenario (replacing what its directory holds), or its own run continued
  const auto request = [&](bool fresh) {
    RunRequest r;
    r.out = dir;
    r.steps = spec_.steps;
    r.every = spec_.every;
    r.checkpoint_every = spec_.checkpoint_every;
    r.command = request_.command;
    r.log = nullptr;
    r.handle_signals = false;
    r.poll_signals = true;  // the guard is run()'s
    r.metrics = metric_names_;
    r.step_graphs = true;
    if (fresh) {
      r.parsed = io::Scenario::from_string(m.scenario_text, spec_.base.string());
      r.overwrite = true;
    } else {
      r.restart = dir.string();
    }
    return r;
  };
  const auto run_once = [&](RunRequest r) {
    Runner runner(modules_, std::move(r));
    // the member's scenario beside its results (relative paths in it are relative to the base's folder)
    io::write_file_atomic(dir / kMemberScenario, m.scenario_text);
    return runner.run();
  };
  bool resumed = false;
  if (before == MemberStatus::running || before == MemberStatus::interrupted) {
    // continue from the newest checkpoint of the member's own run when there is one
    try {
      io::CheckpointSeries::latest(dir);
      resumed = true;
    } catch (const InputError&) {
    }
  }
  if (!resumed && before == MemberStatus::pending && fs::exists(dir)) fs::remove_all(dir);  // killed early
  const auto t0 = std::chrono::steady_clock::now();
  int code = kExitOk;
  std::string message;
  try {
    if (omp_threads_ > 0) omp_set_num_threads(omp_threads_);
    code = run_once(request(!resumed));
  } catch (const InputError& e) {
    // a checkpoint that cannot continue (a stale one, a changed input file): start the member again
    if (!resumed) {
      code = kExitBadInput;
      message = e.what();
    } else {
      log(m.name + ": cannot resume (" + std::string(e.what()) + "); starting it again");
      try {
        code = run_once(request(true));
      } catch (const std::exception& e2) {
        code = exit_code_for(e2);
        message = e2.what();
      }
    }
  } catch (const std::exception& e) {
    code = exit_code_for(e);
    message = e.what();
  }
  const auto t1 = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(t1 - t0).count();
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (!first_start_ || t0 < *first_start_) first_start_ = t0;
  if (!last_end_ || t1 > *last_end_) last_end_ = t1;
  if (code > 128) {
    interrupted_signal_ = code - 128;
    log(m.name + " interrupted after " + number_text(std::round(seconds * 10) / 10) +
        " s; its checkpoint is written (run the sweep again to resume)");
    return;
  }
  ++done_;
  if (code != kExitOk) {
    ++failed_;
    std::replace(message.begin(), message.end(), '\n', ' ');
    log(m.name + " failed (" + describe_values(spec_, m) + "): " + message);
    return;
  }
  std::string metrics;
  if (const auto rec = io::RunRecord::read(dir))
    for (std::size_t k = 0; k < rec->metrics.size() && k < 4; ++k)
      metrics += (k ? ", " : "; ") + rec->metrics[k].first + " " + number_text(rec->metrics[k].second);
  log(m.name + " completed in " + number_text(std::round(seconds * 10) / 10) + " s" +
      (resumed ? " (resumed)" : "") + metrics);
}

int Ensemble::run(MemberQueue& queue, int threads) {
  threads = std::max(1, threads);
  if (exec::backend() == exec::Backend::cpu && threads > 1)
    omp_threads_ = std::max(1, exec::cpu_threads() / threads);
  InterruptGuard guard;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(threads));
  const auto work = [&](std::size_t slot) {
    try {
      exec::ThreadStream stream;  // this thread's members overlap with the other threads' on the device
      while (InterruptGuard::signal_received() == 0) {
        const auto next = queue.next();
        if (!next) break;
        run_member(*next);
      }
    } catch (...) {
      errors[slot] = std::current_exception();
    }
  };
  if (threads == 1) {
    work(0);
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work, static_cast<std::size_t>(t));
    for (auto& t : pool) t.join();
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);  // the engine's own failure (a member's are recorded in its run.json)
  if (interrupted_signal_ == 0 && InterruptGuard::signal_received() != 0)
    interrupted_signal_ = InterruptGuard::signal_received();
  if (interrupted_signal_ != 0) return 128 + interrupted_signal_;
  return failed_ > 0 ? kExitFailure : kExitOk;
}

void Ensemble::write_csv() const {
  SweepLock lock(out_);
  std::ostringstream csv;
  csv << "member,directory";
  for (const auto& p : spec_.parameters) csv << ',' << sweep::csv_field(p.key);
  csv << ",status,exit_code,steps,wall_seconds";
  for (const auto& name : metric_names_) csv << ',' << sweep::csv_field(name);
  csv << ",message\n";
  for (const auto& m : spec_.members) {
    const fs::path dir = member_dir(m.index);
    std::optional<io::RunRecord> rec;
    try {
      rec = io::RunRecord::read(dir);
    } catch (const InputError&) {  // half-written by a killed process: as if not run
    }
    csv << m.index << ',' << sweep::csv_field(m.name);
    for (const auto& v : m.values) csv << ',' << csv_value(v);
    const std::string status = !rec                           ? "pending"
                               : rec->status == "running"     ? "running"
                               : rec->status == "interrupted" ? "interrupted"
                                                              : rec->status;
    csv << ',' << status << ',' << (rec && rec->exit_code >= 0 ? std::to_string(rec->exit_code) : "") << ','
        << (rec ? std::to_string(rec->steps_done) : "") << ','
        << (rec && !rec->ended.empty() ? number_text(rec->wall_seconds) : "");
    std::map<std::string, double> values;
    if (rec && rec->status == "completed")
      for (const auto& [name, value] : rec->metrics) values[name] = value;
    for (const auto& name : metric_names_) {
      const auto it = values.find(name);
      csv << ',' << (it == values.end() ? "" : number_text(it->second));
    }
    std::string message = rec ? rec->message : "";
    std::replace(message.begin(), message.end(), '\n', ' ');
    csv << ',' << sweep::csv_field(message) << '\n';
  }
  io::write_file_atomic(out_ / kSweepTable, csv.str());
}

std::string Ensemble::tally() const {
  std::map<std::string, int> counts;
  for (const auto& m : spec_.members) {
    MemberStatus s = MemberStatus::pending;
    try {
      s = status(m.index);
    } catch (const InputError&) {
    }
    ++counts[to_string(s)];
  }
  std::string text = std::to_string(spec_.members.size()) + " members:";
  bool first = true;
  for (const char* key : {"completed", "failed", "interrupted", "running", "pending"}) {
    if (!counts.count(key)) continue;
    text += std::string(first ? " " : ", ") + std::to_string(counts[key]) + " " + key;
    first = false;
  }
  return text;
}

std::string Ensemble::timeline() const {
  const auto since = [&](std::chrono::steady_clock::time_point t) {
    return number_text(std::round(std::chrono::duration<double>(t - request_.origin).count() * 100) / 100);
  };
  std::string text;
  if (validation_seconds_ >= 0)
    text = "validated in " + number_text(std::round(validation_seconds_ * 100) / 100) + " s";
  if (first_start_ && last_end_)
    text += (text.empty() ? "" : "; ") + std::string("members ran from ") + since(*first_start_) + " s to " +
            since(*last_end_) + " s";
  return text;
}

std::vector<std::size_t> task_block(std::size_t members, int task, int tasks) {
  if (tasks < 1) throw InputError("--tasks must be at least 1");
  if (task < 0 || task >= tasks)
    throw InputError("--task " + std::to_string(task) + " is not in [0, " + std::to_string(tasks) + ")");
  const std::size_t t = static_cast<std::size_t>(tasks), k = static_cast<std::size_t>(task);
  const std::size_t begin = members * k / t, end = members * (k + 1) / t;
  std::vector<std::size_t> out;
  for (std::size_t i = begin; i < end; ++i) out.push_back(i);
  return out;
}

std::string slurm_script(const sweep::SweepSpec& spec, const fs::path& sweep_file, const fs::path& out,
                         const std::string& executable, int tasks, const std::vector<std::string>& extra) {
  const auto quote = [](const std::string& s) {
    std::string q = "'";
    for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# Slurm job array of the sweep " << sweep_file.string() << " (" << spec.members.size()
    << " members in " << tasks << " tasks), written by tissue sweep --slurm.\n"
    << "# Submit: sbatch " << (out / "sweep.slurm").string() << "\n"
    << "# Each task runs one block of members on one GPU; resubmitting (all tasks, or some with --array)\n"
    << "# resumes: completed members are skipped, interrupted ones continue from their checkpoints.\n"
    << "#SBATCH --job-name=" << sweep_file.stem().string() << "\n"
    << "#SBATCH --array=0-" << tasks - 1 << "\n"
    << "#SBATCH --gres=gpu:1\n"
    << "#SBATCH --ntasks=1\n"
    << "#SBATCH --output=" << (out / "slurm-%A_%a.out").string() << "\n";
  for (const auto& e : extra) s << "#SBATCH " << e << "\n";
  s << "#SBATCH --signal=TERM@120\n"
    << "set -euo pipefail\n"
    << "exec " << quote(executable) << " sweep " << quote(fs::absolute(sweep_file).string()) << " --out "
    << quote(fs::absolute(out).string()) << " --task \"$SLURM_ARRAY_TASK_ID\" --tasks " << tasks << "\n";
  return s.str();
}

}  // namespace tissue
