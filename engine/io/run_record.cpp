#include "engine/io/run_record.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "engine/exec/error.hpp"
#include "engine/io/atomic_file.hpp"

namespace tissue::io {

std::string sha256_hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("SHA-256 failed (OpenSSL EVP_Digest)");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

void RunRecord::set_scenario(const std::filesystem::path& path, std::string_view bytes) {
  scenario_path = std::filesystem::absolute(path).lexically_normal().string();
  scenario_sha256 = sha256_hex(bytes);
}

namespace {

/// run.json's content: the JSON, spaces to a size of whole 4 KiB blocks with at least 1 KiB to spare, and a
/// newline (the spare room lets the final record overwrite the first in place on a full disk); or, with
/// `size`, exactly `size` bytes (the message shortened if need be; "" if it cannot fit).
std::string record_text(RunRecord r, std::size_t size = 0) {
  constexpr std::size_t kBlock = 4096, kSpare = 1024;
  for (;;) {
    nlohmann::ordered_json j;
    j["status"] = r.status;
    j["exit_code"] = r.exit_code;
    if (!r.message.empty()) j["message"] = r.message;
    j["scenario"] = {{"path", r.scenario_path}, {"sha256", r.scenario_sha256}};
    j["model"] = r.model;
    j["engine"] = {
        {"version", r.engine_version}, {"revision", r.engine_revision}, {"backends", r.engine_backends}};
    j["backend"] = r.backend;
    j["device"] = r.device;
    j["host"] = r.host;
    if (r.ranks > 1) j["ranks"] = {{"count", r.ranks}, {"process_grid", r.process_grid}};
    j["command"] = r.command;
    j["started"] = r.started;
    j["ended"] = r.ended.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.ended);
    j["steps"] = {{"start", r.start_step}, {"requested", r.steps_requested}, {"done", r.steps_done}};
    if (!r.restarted_from.empty()) j["restarted_from"] = r.restarted_from;
    j["last_checkpoint"] = r.last_checkpoint.empty() ? nlohmann::ordered_json(nullptr)
                                                     : nlohmann::ordered_json(r.last_checkpoint);
    j["wall_seconds"] = r.wall_seconds;
    j["memory"] = {{"estimate_host_bytes", r.memory_estimate_host},
                   {"estimate_device_bytes", r.memory_estimate_device},
                   {"device_peak_bytes", r.memory_device_peak}};
    if (r.memory_device_peak_per_element > 0.0)
      j["memory"]["device_peak_bytes_per_element"] = r.memory_device_peak_per_element;
    if (!r.time_split.empty()) {
      nlohmann::ordered_json split = nlohmann::ordered_json::object();
      for (const auto& [name, seconds] : r.time_split) split[name] = seconds;
      j["time_split_seconds"] = split;
    }
    if (!r.hook_split.empty()) {
      nlohmann::ordered_json split = nlohmann::ordered_json::object();
      for (const auto& [name, seconds] : r.hook_split) split[name] = seconds;
      j["hook_split_seconds"] = split;
    }
    if (!r.metrics.empty()) {
      nlohmann::ordered_json metrics = nlohmann::ordered_json::object();
      for (const auto& [name, value] : r.metrics)  // NaN and infinities become null
        metrics[name] =
            std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
      j["metrics"] = metrics;
    }
    // invalid UTF-8 (a path, a shortened message) becomes U+FFFD instead of an exception
    std::string text = j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    const std::size_t target = size > 0 ? size : (text.size() + 1 + kSpare + kBlock - 1) / kBlock * kBlock;
    if (text.size() + 1 <= target) return text + std::string(target - text.size() - 1, ' ') + "\n";
    if (r.message.size() <= 3) return {};
    const std::size_t over = text.size() + 1 - target;  // escapes make this approximate: try again
    r.message = r.message.substr(0, r.message.size() - std::min(r.message.size(), over + 3)) + "...";
  }
}

}  // namespace

std::optional<RunRecord> RunRecord::read(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / "run.json";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string() + ": cannot be read");
  try {
    const auto j = nlohmann::ordered_json::parse(in);  // ordered: the metrics keep their order
    const auto text = [&](const nlohmann::ordered_json& v) {
      return v.is_null() ? std::string() : v.get<std::string>();
    };
    RunRecord r;
    r.status = j.at("status").get<std::string>();
    r.exit_code = j.at("exit_code").get<int>();
    r.message = j.value("message", std::string());
    r.scenario_path = j.at("scenario").at("path").get<std::string>();
    r.scenario_sha256 = j.at("scenario").at("sha256").get<std::string>();
    r.model = j.at("model").get<std::string>();
    r.engine_version = j.at("engine").at("version").get<std::string>();
    r.engine_revision = j.at("engine").at("revision").get<std::string>();
    r.engine_backends = j.at("engine").at("backends").get<std::string>();
    r.backend = j.at("backend").get<std::string>();
    r.device = j.at("device").get<std::string>();
    r.host = j.at("host").get<std::string>();
    if (const auto ranks = j.find("ranks"); ranks != j.end()) {
      r.ranks = ranks->at("count").get<int>();
      r.process_grid = ranks->at("process_grid").get<std::string>();
    }
    r.command = j.at("command").get<std::vector<std::string>>();
    r.started = j.at("started").get<std::string>();
    r.ended = text(j.at("ended"));
    r.start_step = j.at("steps").at("start").get<std::int64_t>();
    r.steps_requested = j.at("steps").at("requested").get<std::int64_t>();
    r.steps_done = j.at("steps").at("done").get<std::int64_t>();
    r.restarted_from = j.value("restarted_from", std::string());
    r.last_checkpoint = text(j.at("last_checkpoint"));
    r.wall_seconds = j.at("wall_seconds").get<double>();
    if (const auto t = j.find("time_split_seconds"); t != j.end())
      for (const auto& [name, value] : t->items()) r.time_split.emplace_back(name, value.get<double>());
    if (const auto t = j.find("hook_split_seconds"); t != j.end())
      for (const auto& [name, value] : t->items()) r.hook_split.emplace_back(name, value.get<double>());
    if (const auto m = j.find("metrics"); m != j.end())
      for (const auto& [name, value] : m->items())
        r.metrics.emplace_back(
            name, value.is_null() ? std::numeric_limits<double>::quiet_NaN() : value.get<double>());
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path.string() + ": not a run record of tissue (" + e.what() + ")");
  }
}

void RunRecord::write(const std::filesystem::path& dir) const {
  const std::filesystem::path path = dir / "run.json";
  try {
    write_file_atomic(path, record_text(*this));
  } catch (const std::runtime_error&) {
    // a full disk: the record already there has room for this one (record_text's spare), and rewriting
    // it in place needs no new space
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    const std::string text = ec ? std::string() : record_text(*this, static_cast<std::size_t>(size));
    if (text.empty() || !overwrite_file_in_place(path, text)) throw;
  }
}

}  // namespace tissue::io
