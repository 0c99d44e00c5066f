#include "engine/run/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "engine/domain/grid_halo.hpp"
#include "engine/domain/migration.hpp"
#include "engine/exec/algorithms.hpp"
#include "engine/exec/backend.hpp"
#include "engine/exec/error.hpp"
#include "engine/exec/memory.hpp"
#include "engine/io/atomic_file.hpp"
#include "engine/io/paraview_state.hpp"
#include "engine/io/run_directory.hpp"
#include "engine/io/vtk.hpp"
#include "engine/util/interrupt.hpp"
#include "engine/util/progress.hpp"
#include "engine/version.hpp"

namespace fs = std::filesystem;

namespace tissue {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

void create_output_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create output directory " + dir.string() + ": " + ec.message());
}

/// What differs between two io::Scenario::input_files() lists ("<sha256>  <path>" lines), for a message:
/// "the file P changed (SHA-256 a... then, b... now)", or a file read then and not now, or the other way.
std::string changed_input_files(const std::string& before, const std::string& now) {
  const auto parse = [](const std::string& text) {
    std::map<std::string, std::string> files;  // path -> sha256
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (line.size() > 66) files[line.substr(66)] = line.substr(0, 64);
    return files;
  };
  const auto then = parse(before), current = parse(now);
  for (const auto& [path, sha] : then) {
    const auto it = current.find(path);
    if (it == current.end()) return "the file " + path + " is no longer read (the scenario reads others)";
    if (it->second != sha)
      return "the file " + path + " changed (SHA-256 " + sha.substr(0, 12) + "... then, " +
             it->second.substr(0, 12) + "... now)";
  }
  for (const auto& [path, sha] : current)
    if (!then.count(path)) return "the file " + path + " is read now but was not then";
  return "the files read changed";
}

/// The SHA-256 of a file's bytes. @throws InputError if unreadable.
std::string file_sha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": scenario file not found or unreadable");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return io::sha256_hex(bytes);
}

}  // namespace

void check_metric_names(const Simulation& sim, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    bool known = false;
    for (const auto& m : sim.metrics) known = known || m.name == name;
    if (known) continue;
    std::string list;
    for (const auto& m : sim.metrics) list += (list.empty() ? "" : ", ") + m.name;
    throw InputError("metric '" + name + "' is not measured by the model " + sim.model + " (it measures " +
                     list + ")");
  }
}

int exit_code_for(const std::exception& e) {
  if (const auto* failure = dynamic_cast<const RankFailure*>(&e)) return failure->exit_code();
  if (dynamic_cast<const InputError*>(&e)) return kExitBadInput;
  if (dynamic_cast<const NumericalError*>(&e)) return kExitNumerical;
  if (dynamic_cast<const BackendError*>(&e)) return kExitBackend;
  return kExitFailure;
}

std::string version_string() {
  return std::string("tissue ") + kVersion + " (" + kGitRevision + ", backends: " + kBackends + ")";
}

void select_backend(const std::string& name) {
  exec::Backend b = exec::cuda_available() ? exec::Backend::cuda : exec::Backend::cpu;
  if (!name.empty()) {
    try {
      b = exec::parse_backend(name);
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("--backend: ") + e.what());
    }
  }
  try {
    exec::set_backend(b);
  } catch (const std::runtime_error& e) {
    throw BackendError(e.what());
  }
}

Interrupted::Interrupted(int signo, std::int64_t step, const std::string& checkpoint)
    : std::runtime_error(std::string("interrupted by ") + InterruptGuard::signal_name(signo) +
                         " after step " + std::to_string(step) + "; the state of that step is written" +
                         (checkpoint.empty() ? "" : " to " + checkpoint)),
      signo_(signo) {}

Runner::Runner(const ModuleRegistry& modules, RunRequest request) : request_(std::move(request)) {
  started_ = now_seconds();
  comm_ = request_.decomposed.comm;
  if (comm_ != nullptr && !request_.decomposed.decompose)
    throw std::invalid_argument("Runner: a decomposed run needs DecomposedRun::decompose");
  if (!root()) {  // the log and the bar are rank 0's
    request_.log = nullptr;
    request_.progress_bar = false;
  }
  std::pair<fs::path, bool> prepared;
  agreed([&] { prepared = prepare(modules); });
  const bool same_dir = prepared.second;
  // every rank composed (or read) the whole tissue: each keeps its part
  if (comm_ != nullptr) agreed([&] { decomposition_ = request_.decomposed.decompose(*sim_, *comm_); });

  Simulation& sim = *sim_;
  start_step_ = sim.world->step;
  record_.command = request_.command;
  record_.set_scenario(header_.scenario_path, header_.scenario_text);
  record_.engine_version = kVersion;
  record_.engine_revision = kGitRevision;
  record_.engine_backends = kBackends;
  record_.model = sim.model;
  record_.backend = header_.backend;
  record_.device = exec::device_description();
  record_.host = host_name();
  if (decomposition_) {
    record_.ranks = comm_->size();
    record_.process_grid =
        std::to_string(decomposition_->grid().px) + " x " + std::to_string(decomposition_->grid().py);
  }
  record_.started = io::utc_now_iso8601();
  record_.steps_requested = end_step_;
  record_.start_step = record_.steps_done = sim.world->step;
  record_.restarted_from = restarted_from_;
  record_.memory_estimate_host = sim.memory.host;
  record_.memory_estimate_device = sim.memory.device;
  // the other ranks write their pieces into the directory once rank 0 has made it
  agreed([&] {
    if (request_.write_output && root()) open_output(same_dir);
  });
}

std::pair<fs::path, bool> Runner::prepare(const ModuleRegistry& modules) {
  const RunRequest& opt = request_;
  std::optional<io::Scenario> scenario;
  fs::path checkpoint;
  if (!opt.restart.empty()) {
    checkpoint =
        fs::is_directory(opt.restart) ? io::CheckpointSeries::latest(opt.restart) : fs::path(opt.restart);
    const io::CheckpointHeader h = io::read_checkpoint_header(checkpoint);
    if (h.status != "ok")
      throw InputError("checkpoint " + checkpoint.string() + " holds the last state of a failed run (" +
                       h.message + "); restart from an earlier checkpoint");
    // the directory's run.json says whose run it holds: a checkpoint of another scenario is a stale file
    // (of a run the directory held before), never the continuation of this one
    const fs::path checkpoint_dir = fs::absolute(checkpoint).parent_path();
    if (const auto owner = io::RunRecord::read(checkpoint_dir);
        owner && owner->scenario_sha256 != h.scenario_sha256)
      throw InputError("checkpoint " + checkpoint.string() + " holds a run of the scenario with SHA-256 " +
                       h.scenario_sha256 + ", but " + (checkpoint_dir / "run.json").string() +
                       " records the scenario with SHA-256 " + owner->scenario_sha256 +
                       ": the checkpoint is not of this directory's run (a stale file of an earlier one?)");
    if (!opt.scenario.empty() && file_sha256(opt.scenario) != h.scenario_sha256)
      throw InputError("checkpoint " + checkpoint.string() + " was written by a run of another scenario (" +
                       h.scenario_path + ", SHA-256 " + h.scenario_sha256.substr(0, 12) + "...) than " +
                       opt.scenario + "; leave the scenario out to use the checkpoint's own");
    scenario = io::Scenario::from_string(h.scenario_text, h.scenario_path);
    header_ = h;
    restarted_from_ = checkpoint.string();
  } else if (opt.parsed) {
    scenario = *opt.parsed;
    header_.scenario_path = scenario->path();
    header_.scenario_text = scenario->text();
    header_.scenario_sha256 = io::sha256_hex(scenario->text());
  } else {
    if (opt.scenario.empty()) throw InputError("tissue run needs a scenario file or --restart CHECKPOINT");
    scenario = io::Scenario::from_file(opt.scenario);
    header_.scenario_path = fs::absolute(opt.scenario).lexically_normal().string();
    header_.scenario_text = scenario->text();
    header_.scenario_sha256 = io::sha256_hex(scenario->text());
  }
  sim_ = modules.build_simulation(*scenario);
  if (!checkpoint.empty() && !header_.input_files.empty() && scenario->input_files() != header_.input_files)
    throw InputError("checkpoint " + checkpoint.string() + ": " +
                     changed_input_files(header_.input_files, scenario->input_files()) +
                     " since the checkpoint was written; a restart continues on the files the run started "
                     "with: restore them, or start a new run");
  header_.input_files = scenario->input_files();
  Simulation& sim = *sim_;
  if (opt.checkpoint_every) sim.checkpoint.every_steps = *opt.checkpoint_every;
  if (opt.metrics) check_metric_names(sim, *opt.metrics);
  if (opt.step_graphs) sim.schedule.set_step_graphs(true);
  header_.engine_version = kVersion;
  header_.engine_revision = kGitRevision;
  header_.model = sim.model;
  header_.backend = std::string(exec::to_string(exec::backend()));
  end_step_ = opt.steps.value_or(checkpoint.empty() ? sim.steps : header_.steps_requested);
  header_.steps_requested = end_step_;
  every_ = opt.every.value_or(sim.output_every);

  const fs::path run_dir = checkpoint.empty() ? fs::path() : fs::absolute(checkpoint).parent_path();
  const std::string stem_of = opt.parsed && opt.scenario.empty() ? opt.parsed->path() : opt.scenario;
  out_ = !opt.out.empty()   ? opt.out
         : !run_dir.empty() ? run_dir
                            : fs::path("runs") / fs::path(stem_of).stem();
  std::error_code ec;
  const bool same_dir = opt.write_output && !run_dir.empty() && fs::equivalent(out_, run_dir, ec);
  if (opt.write_output) {
    if (root()) {  // the directory is rank 0's
      // checked now, so that nothing is written for invalid input; checked again under the lock
      io::check_not_locked(out_);
      if (!same_dir) {  // a restart continues its own directory
        try {
          io::check_output_directory(out_, opt.overwrite);
        } catch (const InputError&) {
          // a run that started into it since check_not_locked() (its lock and first files, written under a
          // temporary name, are there): name that run rather than the files
          io::check_not_locked(out_);
          throw;
        }
      }
    }
    io::OutputPiece piece;
    if (comm_ != nullptr) {
      piece.rank = comm_->rank();
      piece.ranks = comm_->size();
      // the decomposition comes after this (the writer lives as long as the Runner, which is not moved)
      piece.grid_block = [this](int nx, int ny, int nz, double h, int rank) {
        const domain::GridBlock b = domain::grid_block(*decomposition_, GridShape{nx, ny, nz, h}, rank);
        // one node more on a side that meets another piece (the ghost frame holds it), for no gap
        return io::ImageExtent{b.i0, b.i1 < nx ? b.i1 : nx - 1, b.j0, b.j1 < ny ? b.j1 : ny - 1, 0, nz - 1};
      };
    }
    writer_ = sim.make_writer(out_, piece);  // writes nothing yet
  } else {
    out_.clear();
  }
  if (!checkpoint.empty()) {
    // in a decomposed run every rank reads the whole tissue (decompose() keeps rank 0's), rank 0 the series
    const bool series = same_dir && root();
    const SystemStates states = io::read_checkpoint_state(
        checkpoint, *sim.world, series ? writer_->series() : std::vector<io::PvdSeries*>{});
    try {
      sim.schedule.restore_states(*sim.world, states);
    } catch (const InputError& e) {
      throw InputError("checkpoint " + checkpoint.string() + ": " + e.what());
    }
    // snapshots are written on a host thread: a run killed meanwhile left its checkpoint naming one that is
    // not on disk; the series goes on without it
    if (series)
      for (io::PvdSeries* s : writer_->series())
        for (const std::string& file : s->drop_missing())
          if (request_.log != nullptr)
            std::fprintf(request_.log,
                         "note: %s names %s, which is not on disk (the stopped run had not "
                         "written it): left out of the series\n",
                         s->path().filename().string().c_str(), file.c_str());
    sim.dt = header_.dt;
    if (end_step_ <= sim.world->step)
      throw InputError("checkpoint " + checkpoint.string() + " is at step " +
                       std::to_string(sim.world->step) + ", the run ends at step " +
                       std::to_string(end_step_) + ": nothing to do (--steps N sets a later end)");
  }
  return {checkpoint, same_dir};
}

void Runner::open_output(bool same_dir) {
  const RunRequest& opt = request_;
  create_output_dir(out_);          // only now that all input is checked
  lock_ = io::DirectoryLock(out_);  // until the Runner ends; refuses a second run into the directory
  if (!same_dir) {
    io::check_output_directory(out_, opt.overwrite);  // what another run may have left meanwhile
    if (opt.overwrite) io::clear_run_outputs(out_);   // a previous run's files would mix with this one's
  }
  io::remove_stale_temporaries(out_);  // what a killed run of this directory left half-written
  record_.write(out_);                 // "running" until the run ends, however it ends
}

template <class Body>
void Runner::agreed(Body&& body) {
  if (comm_ == nullptr) {
    body();
    return;
  }
  int code = 0;
  std::string message;
  try {
    body();
  } catch (const std::exception& e) {
    code = exit_code_for(e);
    message = e.what();
    if (code == kExitOk) code = kExitFailure;
  }
  if (comm_->max(static_cast<std::int64_t>(code != 0 ? 1 : 0)) == 0) return;
  // every rank sends its code and message to every rank: the lowest failing rank's is the run's
  domain::Bytes mine(sizeof code + message.size());
  std::memcpy(mine.data(), &code, sizeof code);
  std::memcpy(mine.data() + sizeof code, message.data(), message.size());
  const std::vector<domain::Bytes> got =
      comm_->all_to_all(std::vector<domain::Bytes>(static_cast<std::size_t>(comm_->size()), mine));
  for (std::size_t r = 0; r < got.size(); ++r) {
    int theirs = 0;
    std::memcpy(&theirs, got[r].data(), sizeof theirs);
    if (theirs == 0) continue;
    const std::string text(reinterpret_cast<const char*>(got[r].data()) + sizeof theirs,
                           got[r].size() - sizeof theirs);
    throw RankFailure(theirs, r == 0 ? text : "rank " + std::to_string(r) + ": " + text);
  }
}

template <class Body>
void Runner::on_whole_tissue(Body&& body) {
  World& w = *sim_->world;
  if (comm_ == nullptr) {
    body(w);
    return;
  }
  exec::synchronize();
  w.download();
  domain::gather_to_root(*comm_, w);
  domain::gather_grid_fields_to_root(*decomposition_, *comm_, w);  // each rank steps its block of a grid
  std::exception_ptr error;
  try {
    agreed([&] {
      if (root()) body(w);
    });
  } catch (...) {
    error = std::current_exception();
  }
  domain::migrate_to_owners(*decomposition_, *comm_, w);  // back to their owners, in id order as before
  w.cells.shrink_to_fit();                                // rank 0's tables held the whole tissue
  w.elements.shrink_to_fit();
  if (error) std::rethrow_exception(error);
}

Runner::~Runner() = default;

std::string Runner::write_checkpoint(const char* status, const std::string& message) {
  if (!writer_) return "";  // nothing is written (RunRequest::write_output)
  header_.status = status;
  header_.message = message;
  header_.dt = sim_->dt;
  exec::synchronize();
  const double start = now_seconds();
  std::string path;
  // a decomposed run's checkpoint is the whole tissue in the one-rank format, written by rank 0
  on_whole_tissue([&](World& w) {
    io::CheckpointSeries series(out_, sim_->checkpoint.keep);
    path = series.write(w, header_, writer_->series(), sim_->schedule.save_states(w)).string();
  });
  checkpoint_seconds_ += now_seconds() - start;
  return path;
}

void Runner::write_snapshot() {
  exec::synchronize();
  const double start = now_seconds();
  writer_->write(*sim_->world);
  output_seconds_ += now_seconds() - start;
}

void Runner::wait_for_output() {
  if (!writer_) return;
  const double start = now_seconds();
  writer_->wait();
  output_seconds_ += now_seconds() - start;
}

void Runner::write_checkpoint_to(const fs::path& path) {
  io::CheckpointHeader header = header_;
  header.status = "ok";
  header.message.clear();
  header.dt = sim_->dt;
  on_whole_tissue([&](World& w) {
    io::write_checkpoint(path, w, header, writer_ ? writer_->series() : std::vector<io::PvdSeries*>{},
                         sim_->schedule.save_states(w));
  });
}

void Runner::finish(const char* status, int exit_code, const std::string& message) {
  // the snapshots queued so far are on disk before run.json says how the run ended (an error of one
  // matters less here than the end being recorded: conclude() reports it on a completed run)
  try {
    wait_for_output();
  } catch (const std::exception&) {
  }
  record_.status = status;
  record_.exit_code = exit_code;
  record_.message = message;
  record_.ended = io::utc_now_iso8601();
  record_.wall_seconds = now_seconds() - started_;
  record_.memory_device_peak = exec::allocation_stats(exec::backend()).peak;
  const std::size_t elements = sim_->world->elements.size();
  record_.memory_device_peak_per_element =
      elements > 0 ? static_cast<double>(record_.memory_device_peak) / static_cast<double>(elements) : 0.0;
  record_.time_split = time_split(record_.wall_seconds);
  record_.hook_split = sim_->schedule.hook_split();
  if (request_.write_output && root()) record_.write(out_);
}

std::vector<std::pair<std::string, double>> Runner::time_split(double wall_seconds) const {
  const double hooks = sim_->schedule.hook_seconds();
  const double other = hooks + output_seconds_ + checkpoint_seconds_ + check_seconds_ + summary_seconds_;
  return {{"stepping", std::max(0.0, wall_seconds - other)},
          {"hooks", hooks},
          {"output", output_seconds_},
          {"checkpoints", checkpoint_seconds_},
          {"checks", check_seconds_},
          {"summary", summary_seconds_}};
}

template <class Body>
int Runner::guarded(Body&& body) {
  try {
    body();
  } catch (const Interrupted& e) {
    finish("interrupted", e.exit_code(), e.what());
    if (request_.log != nullptr) std::fprintf(stderr, "\ntissue: %s (%s)\n", e.what(), out_.string().c_str());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::string failed_state;
    try {
      // keep the broken state for inspection; in a decomposed run only where every rank stopped here (a
      // RankFailure): the checkpoint is collective, and a rank that failed alone must not wait for the others
      const bool all_ranks = comm_ == nullptr || dynamic_cast<const RankFailure*>(&e) != nullptr;
      if (exit_code_for(e) == kExitNumerical && all_ranks) {
        record_.last_checkpoint = write_checkpoint("failed", e.what());
        failed_state = record_.last_checkpoint;
      }
      finish("failed", exit_code_for(e), e.what());
      closed_ = true;
    } catch (const std::exception&) {  // the original error matters more than a failed record
    }
    if (request_.progress_bar) std::fprintf(stderr, "\n");  // end the bar's line before the error's
    // one error line: where the failed state is goes into the message the command prints
    if (!failed_state.empty()) {
      const std::string message = std::string(e.what()) + " (the failed state is in " + failed_state + ")";
      if (dynamic_cast<const RankFailure*>(&e)) throw RankFailure(kExitNumerical, message);
      throw NumericalError(message);
    }
    throw;
  }
  return kExitOk;
}

int Runner::run() {
  started_ = now_seconds();
  const int code = guarded([&] {
    begin();
    advance(end_step_);
  });
  if (code != kExitOk) return code;
  close();
  return kExitOk;
}

int Runner::step(std::int64_t n) {
  if (!begun_) started_ = now_seconds();
  return guarded([&] {
    begin();
    if (converged_at_ < 0) advance(sim_->world->step + n);  // a converged run stops there
    wait_for_output();  // a driver stepping in chunks may read the files between them
  });
}

void Runner::close() {
  if (closed_) return;
  // a run closed before its first step still has its initial snapshot, like a run of 0 steps
  guarded([&] {
    begin();
    conclude();
  });
  closed_ = true;
  finish("completed", kExitOk, "");
}

void Runner::begin() {
  if (begun_) return;
  begun_ = true;
  Simulation& sim = *sim_;
  World& w = *sim.world;
  if (std::FILE* log = request_.log) {
    std::fprintf(log, "%s\nmodel %s, backend %s: %s\n%s\n", version_string().c_str(), sim.model.c_str(),
                 std::string(exec::to_string(exec::backend())).c_str(), exec::device_description().c_str(),
                 sim.description.c_str());
    if (decomposition_)
      std::fprintf(log, "one tissue over %d ranks: process grid %s, halo width %g (docs/multi_gpu.md)\n",
                   record_.ranks, record_.process_grid.c_str(), decomposition_->halo_width());
    if (!restarted_from_.empty())
      std::fprintf(log, "restarting at step %lld (t = %g) from %s\n", static_cast<long long>(w.step), w.time,
                   restarted_from_.c_str());
    std::fprintf(log, "steps %lld to %lld of dt = %g, output every %lld steps to %s\n",
                 static_cast<long long>(w.step), static_cast<long long>(end_step_), sim.dt,
                 static_cast<long long>(every_), out_.empty() ? "(nothing written)" : out_.string().c_str());
    std::fflush(log);
  }
  if (writer_) {
    write_snapshot();
    // view.pvsm, ParaView's view of the series just started; written once per directory (a restart keeps it)
    if (root() && !fs::exists(out_ / io::kParaviewStateFileName))
      io::write_paraview_state(out_, writer_->series());
  }
  last_checkpoint_clock_ = now_seconds();
  if (request_.log != nullptr)
    progress_ = std::make_unique<Progress>(end_step_ - start_step_, request_.progress_bar);
}

void Runner::advance(std::int64_t target) {
  Simulation& sim = *sim_;
  World& w = *sim.world;
  const CheckpointSettings& cp = sim.checkpoint;
  // SIGINT/SIGTERM: finish the step, write it, checkpoint, stop
  std::optional<InterruptGuard> interrupt;
  if (request_.handle_signals) interrupt.emplace();
  const bool poll = request_.handle_signals || request_.poll_signals;
  for (std::int64_t step = w.step + 1; step <= target; ++step) {
    sim.schedule.step(w, sim.dt);
    record_.steps_done = step;
    if (progress_) progress_->update(step - start_step_);
    const bool check_due = sim.check_every > 0 && step % sim.check_every == 0;
    if (step < end_step_ && check_due && sim.converged) {
      bool converged = sim.converged(w);
      // a decomposed run converged when every rank's part did
      if (comm_ != nullptr) converged = comm_->max(static_cast<std::int64_t>(converged ? 0 : 1)) == 0;
      if (converged) converged_at_ = step;
    }
    const bool last = step == end_step_ || converged_at_ == step;
    const bool output = last || (every_ > 0 && step % every_ == 0);
    if (sim.check && (output || check_due)) {
      exec::synchronize();
      const double start = now_seconds();
      agreed([&] { sim.check(w); });  // a failure on one rank stops all of them here
      check_seconds_ += now_seconds() - start;
    }
    int signo = poll ? InterruptGuard::signal_received() : 0;
    // mpirun passes a signal to every rank, each sees it after a step of its own: they stop at one step
    if (comm_ != nullptr && poll) signo = static_cast<int>(comm_->max(static_cast<std::int64_t>(signo)));
    if (writer_ && (output || signo != 0)) write_snapshot();
    const double minutes = (now_seconds() - last_checkpoint_clock_) / 60.0;
    if (writer_ && (signo != 0 || (cp.every_steps > 0 && step % cp.every_steps == 0) ||
                    (cp.every_minutes > 0.0 && minutes >= cp.every_minutes) || (last && cp.at_end))) {
      record_.last_checkpoint = write_checkpoint("ok", "");
      last_checkpoint_clock_ = now_seconds();
    }
    if (signo != 0) {
      exec::synchronize();
      throw Interrupted(signo, step, record_.last_checkpoint);
    }
    if (last) finished_ = true;
    if (converged_at_ == step) break;
  }
  // no synchronisation here: a driver stepping one step at a time keeps the device busy while it launches
  // the next; whatever reads the state (downloads, conclude()) synchronises
}

void Runner::conclude() {
  Simulation& sim = *sim_;
  World& w = *sim.world;
  exec::synchronize();
  // the metrics and the summary read the world while the last snapshot is still being written on the
  // writer's thread (it holds its own copies); then the run waits for it (a write that failed fails the run)
  const double summary_start = now_seconds();
  const std::int64_t ran = w.step - start_step_;
  std::FILE* log = request_.log;
  if (progress_) progress_->finish(ran);
  if (log != nullptr && converged_at_ > 0)
    std::fprintf(log, "converged at step %lld: stopping early\n", static_cast<long long>(converged_at_));
  w.download();
  // a decomposed run: the device memory each rank holds after the last step, before the gather below puts
  // the whole tissue on rank 0 (collective; one value per rank)
  std::vector<double> rank_memory;
  if (comm_ != nullptr) {
    rank_memory.assign(static_cast<std::size_t>(comm_->size()), 0.0);
    rank_memory[static_cast<std::size_t>(comm_->rank())] =
        static_cast<double>(exec::allocation_stats(exec::backend()).current);
    rank_memory = comm_->max(rank_memory);
  }
  std::string summary;
  // the metrics and the summary of the whole tissue: in a decomposed run gathered on rank 0
  on_whole_tissue([&](World& whole) {
    if (request_.metrics) {
      record_.metrics.clear();
      for (const auto& m : sim.metrics) {
        const auto& wanted = *request_.metrics;
        if (wanted.empty() || std::find(wanted.begin(), wanted.end(), m.name) != wanted.end())
          record_.metrics.emplace_back(m.name, m.measure(whole));
      }
      if (!request_.metrics->empty())  // in the order asked for
        std::sort(record_.metrics.begin(), record_.metrics.end(), [&](const auto& a, const auto& b) {
          const auto& wanted = *request_.metrics;
          return std::find(wanted.begin(), wanted.end(), a.first) <
                 std::find(wanted.begin(), wanted.end(), b.first);
        });
    }
    if (log != nullptr && sim.summary) summary = sim.summary(whole);
  });
  summary_seconds_ += now_seconds() - summary_start;
  wait_for_output();
  if (log == nullptr) return;
  std::fprintf(log, "%s\n", summary.c_str());
  if (!rank_memory.empty()) {
    std::string held;
    for (const double bytes : rank_memory) held += " " + std::to_string(std::lround(bytes / 1e6));
    std::fprintf(log, "device memory held per rank after the last step [MB]:%s\n", held.c_str());
  }
  const double elapsed = progress_ ? progress_->elapsed() : 0.0;
  const double steps_per_s = elapsed > 0 ? static_cast<double>(ran) / elapsed : 0.0;
  std::fprintf(log, "wall time %.1f s, %.1f steps/s; output in %s (open its .pvd files in ParaView)\n",
               elapsed, steps_per_s, out_.empty() ? "(nothing written)" : out_.string().c_str());
  std::string split;
  for (const auto& [name, seconds] : time_split(now_seconds() - started_)) {
    if (seconds < 0.05 && name != "stepping") continue;
    char part[64];
    std::snprintf(part, sizeof part, "%s%s %.1f s", split.empty() ? "" : ", ", name.c_str(), seconds);
    split += part;
  }
  std::fprintf(log, "time: %s\n", split.c_str());
  if (!record_.last_checkpoint.empty())
    std::fprintf(log, "checkpoint %s (continue with: tissue run --restart %s --steps N)\n",
                 record_.last_checkpoint.c_str(), record_.last_checkpoint.c_str());
  std::fflush(log);
}

}  // namespace tissue
