#include "engine/io/run_record.hpp"

#include <openssl/evp.h>

#include <array>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>

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

void RunRecord::write(const std::filesystem::path& dir) const {
  nlohmann::ordered_json j;
  j["status"] = status;
  j["exit_code"] = exit_code;
  if (!message.empty()) j["message"] = message;
  j["scenario"] = {{"path", scenario_path}, {"sha256", scenario_sha256}};
  j["model"] = model;
  j["engine"] = {{"version", engine_version}, {"revision", engine_revision}, {"backends", engine_backends}};
  j["backend"] = backend;
  j["device"] = device;
  j["host"] = host;
  j["command"] = command;
  j["started"] = started;
  j["ended"] = ended.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(ended);
  j["steps"] = {{"start", start_step}, {"requested", steps_requested}, {"done", steps_done}};
  if (!restarted_from.empty()) j["restarted_from"] = restarted_from;
  j["last_checkpoint"] =
      last_checkpoint.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(last_checkpoint);
  j["wall_seconds"] = wall_seconds;
  j["memory"] = {{"estimate_host_bytes", memory_estimate_host},
                 {"estimate_device_bytes", memory_estimate_device},
                 {"device_peak_bytes", memory_device_peak}};
  write_file_atomic(dir / "run.json", j.dump(2) + "\n");
}

}  // namespace tissue::io
